package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// An imported AIPerf or GuideLLM command line runs against the built-in
// engine (`llmbench serve` as a child process): every request the command
// line asked for is sent, with its lengths, and answered in full (both
// tools' lines here pin the output with ignore_eos).
func TestImportPeersRunAgainstServe(t *testing.T) {
	t.Parallel()
	base := serveEngine(t) // http://127.0.0.1:PORT/v1
	root := strings.TrimSuffix(base, "/v1")
	for _, c := range []struct {
		tool     string
		args     []string
		requests int
		prompt   int // the planned prompt length
		output   int // max_tokens
	}{
		{"aiperf", []string{"aiperf", "profile", "-m", "m", "--url", strings.TrimPrefix(root, "http://"), "--endpoint-type", "chat",
			"--streaming", "--concurrency", "3", "--request-count", "12", "--isl", "32", "--osl", "8",
			"--extra-inputs", "ignore_eos:true", "--random-seed", "5", "--artifact-dir", "out"}, 12, 32, 8},
		{"guidellm", []string{"guidellm", "benchmark", "--target", root, "--profile", "constant", "--rate", "40",
			"--max-requests", "10", "--data", "prompt_tokens=24,output_tokens=6", "--random-seed", "5", "--outputs", "json"}, 10, 24, 6},
	} {
		path := filepath.Join(t.TempDir(), c.tool+".yaml")
		cio, _, stderr := testIO(nil)
		code := execute(context.Background(), cio, append([]string{"import", c.tool, "-o", path, "--"}, c.args...))
		if code != exitOK {
			t.Fatalf("import %s: exit %d\n%s", c.tool, code, stderr)
		}
		if !strings.Contains(stderr.String(), "not carried over: --") {
			t.Errorf("import %s: the output option is not listed as not carried over:\n%s", c.tool, stderr)
		}
		runs := t.TempDir()
		cio, stdout, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"run", path, "--output-dir", runs, "--view", "plain"}); code != exitOK {
			t.Fatalf("run the imported %s scenario: exit %d\n%s\n%s", c.tool, code, stdout, stderr)
		}
		dir := strings.TrimPrefix(lastLineWith(t, stdout.String(), "run directory: "), "run directory: ")
		sent := sentRequests(t, dir)
		if len(sent) != c.requests {
			t.Fatalf("%s: %d requests sent, want %d", c.tool, len(sent), c.requests)
		}
		for _, s := range sent {
			// id, prompt length, max_tokens, tokens received, error
			if f := strings.Fields(s); len(f) != 4 || f[1] != fmt.Sprint(c.prompt) || f[2] != fmt.Sprint(c.output) || f[3] != fmt.Sprint(c.output) {
				t.Errorf("%s: request %q, want %d prompt tokens, max_tokens and %d tokens back, no error", c.tool, s, c.prompt, c.output)
			}
		}
	}
}
