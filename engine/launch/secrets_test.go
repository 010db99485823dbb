package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An engine that logs its own arguments and environment in its own syntax
// (vLLM: "non-default args: {'api_key': ['…']}") does not put the secrets
// it was given into engine.log, nor into the tail an error quotes: every
// secret flag's value, secret-named variable's value and the API key are
// replaced verbatim, whatever surrounds them.
func TestEngineLogHidesTheSecretsItWasGiven(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "engine.log")
	// $0 is x, $1 --api-key, $2 its value, $3 a key llmbench knows.
	script := `echo "INFO non-default args: {'api_key': ['$2'], 'hf': '$HF_TOKEN', 'probe': \"$3\"}"; echo "token list [$2|$HF_TOKEN]"; echo "switch $USE_AUTH_TOKEN"`
	argv := []string{"sh", "-c", script, "x", "--api-key", "k3y-value-one", "probe-key-9"}
	env := append(os.Environ(), "HF_TOKEN=hf_secretvalue", "USE_AUTH_TOKEN=false")
	p, err := spawn("/bin/sh", argv, env, "", logSpec{path: logPath}, "probe-key-9")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second): // a bound on a hang: the script ends at once
		t.Fatal("the script never ended")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.stop(ctx)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b) + p.tailMessage()
	for _, secret := range []string{"k3y-value-one", "hf_secretvalue", "probe-key-9"} {
		if strings.Contains(text, secret) {
			t.Errorf("engine.log or its tail holds %q:\n%s", secret, text)
		}
	}
	if !strings.Contains(string(b), "switch false") {
		t.Errorf("a switch's value was taken for a secret:\n%s", b)
	}
	if !strings.Contains(string(b), "non-default args: {'api_key': ['REDACTED']") {
		t.Errorf("engine.log does not show where the key was:\n%s", b)
	}
}

// The last lines an error quotes are redacted whole before they are
// shortened: a known secret that the shortening would cut in two (and no
// pattern recognises) is not quoted in part.
func TestTailMessageRedactsBeforeShortening(t *testing.T) {
	t.Parallel()
	const secret = "Zq9Wx7Pv3Lm2Kd8R"
	s, err := openLogSink("", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.known = []string{secret}
	p := &process{log: s}
	fmt.Fprintf(s, "%s %s\n", strings.Repeat("x", tailWidth-8), secret)
	got := p.tailMessage()
	if strings.Contains(got, secret[:4]) || !strings.Contains(got, "xxxx") {
		t.Errorf("tail message quotes the secret in part, or nothing: %q", got)
	}
}
