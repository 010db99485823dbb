package llamacpp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// installHint is how a developer gets what the tests need.
const installHint = "eval \"$(bash .ci/real-llamacpp/install)\" && export LLMBENCH_LLAMACPP_SERVER LLMBENCH_LLAMACPP_MODEL"

// Both engines get 4 slots of 512 tokens: llama-server -c 2048 -np 4
// divides its context between the slots.
const (
	slots   = 4
	slotCtx = 512
)

// startLimit bounds the real server's start: a 17 MB model loads in well
// under a second; the bound is for a loaded machine.
const startLimit = 2 * time.Minute

// byteTokens are the ids of the 256 byte-fallback tokens of the Llama
// SentencePiece vocabulary (<0x00> … <0xFF>). A random-weight model samples
// them into invalid UTF-8, which llama-server's chat parser rejects mid-stream
// (REAL-COMPONENTS.md): requests that must finish ban them with logit_bias.
const firstByteToken, lastByteToken = 3, 258

// target is one engine under comparison: the real llama-server or the
// built-in engine speaking its dialect.
type target struct {
	name  string
	root  string // http://host:port
	model string
	real  bool
}

var (
	real, emulated target
	// missing says why there is no real server ("" = it runs); tests call both.
	missing string
	// server and model are the llama-server binary and the GGUF it loads
	// ("" when the tests use an already running server).
	server, model string
	// llmbenchBin is the CLI built for the end-to-end run ("" = buildErr).
	llmbenchBin string
	buildErr    error
	built       = make(chan struct{}) // closed once llmbenchBin and buildErr are set
)

func TestMain(m *testing.M) { os.Exit(runAll(m)) }

// emulatedConfig is the built-in engine in the llama.cpp dialect with the
// real server's slots and per-slot context.
func emulatedConfig() (sim.Config, error) {
	p, err := sim.Preset("tiny")
	if err != nil {
		return sim.Config{}, err
	}
	p.MaxModelLen = slotCtx
	p.MaxRunningRequests = slots
	// llama-server caches each slot's prompt token by token: its KV cache
	// is -c tokens in cells of one.
	p.KVBlockSize = 1
	p.KVBlocks = slots * slotCtx
	// llama-server closes the connection after every streamed response; the
	// dialect leaves that to the parameter (decision 2200).
	p.CloseAfterStream = true
	return sim.Config{Dialect: sim.DialectLlamaCpp, Model: "tiny", Params: p}, nil
}

// runAll starts both engines once for the whole package, runs the tests and
// stops them: the real one is killed and reaped with its process group
// (engine/launch) whatever the tests did.
func runAll(m *testing.M) int {
	cfg, err := emulatedConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	se, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sep, err := se.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop(se.Stop)
	emulated = target{name: "built-in llamacpp dialect", root: rootOf(sep.BaseURL), model: "tiny"}

	if url := os.Getenv("LLMBENCH_LLAMACPP_URL"); url != "" {
		// A llama-server already running with the flags below, for working
		// on these tests without starting one each time.
		real = target{name: "real llama-server", root: strings.TrimSuffix(url, "/"), model: "tiny", real: true}
		defer startBuild()()
		return m.Run()
	}
	server, model = os.Getenv("LLMBENCH_LLAMACPP_SERVER"), os.Getenv("LLMBENCH_LLAMACPP_MODEL")
	if server == "" || model == "" {
		missing = "LLMBENCH_LLAMACPP_SERVER and LLMBENCH_LLAMACPP_MODEL are not set; build llama-server and the tiny GGUF with: " + installHint
		return m.Run()
	}
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("llmbench-llamacpp-conformance-%d.log", os.Getpid()))
	le, err := launch.New(launch.Config{
		Kind: launch.KindLlamaCpp,
		Command: []string{server, "-m", "{model}", "--host", "{host}", "--port", "{port}", "--metrics",
			"--alias", "tiny", "-c", fmt.Sprint(slots * slotCtx), "-np", fmt.Sprint(slots), "-t", "1", "--jinja", "--no-warmup"},
		Model:   model,
		Ready:   startLimit,
		LogPath: logPath,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer startBuild()() // the CLI builds while the server loads
	began := time.Now()
	ep, err := le.Start(context.Background())
	if err != nil {
		missing = fmt.Sprintf("the real llama-server did not start within %v: %v (its output: %s)", startLimit, err, logPath)
		return m.Run()
	}
	defer stop(le.Stop)
	fmt.Fprintf(os.Stderr, "real llama-server ready after %v at %s\n", time.Since(began).Round(time.Millisecond), ep.BaseURL)
	real = target{name: "real llama-server", root: rootOf(ep.BaseURL), model: "tiny", real: true}
	code := m.Run()
	if code == 0 {
		_ = os.Remove(logPath)
	} else {
		fmt.Fprintln(os.Stderr, "the real llama-server's output:", logPath)
	}
	return code
}

func stop(f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := f(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
	}
}

// rootOf turns an API base URL (…/v1) into the server's root.
func rootOf(base string) string { return strings.TrimSuffix(base, "/v1") }

// startBuild builds the CLI in the background and returns what waits for
// the build and removes it.
func startBuild() (cleanup func()) {
	go func() { defer close(built); llmbenchBin, buildErr = buildCLI() }()
	return func() { <-built; os.RemoveAll(filepath.Dir(llmbenchBin)) }
}

// buildCLI builds llmbench into a temporary directory for the end-to-end run.
func buildCLI() (string, error) {
	dir, err := os.MkdirTemp("", "llmbench-conformance-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "llmbench")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/llmbench-org/llmbench/cmd/llmbench").CombinedOutput()
	if err != nil {
		return bin, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// both returns the two targets after checking the real one runs.
func both(t *testing.T) []target {
	t.Helper()
	if missing != "" {
		realtest.Missing(t, missing)
	}
	return []target{real, emulated}
}

// noBytes is the logit_bias that bans the byte tokens, as [id, false] pairs.
func noBytes() [][2]any {
	out := make([][2]any, 0, lastByteToken-firstByteToken+1)
	for id := firstByteToken; id <= lastByteToken; id++ {
		out = append(out, [2]any{id, false})
	}
	return out
}

// runCLI runs `llmbench run` on scenario (env added to this process's) and
// returns its output directory, its summary.json and its output.
func runCLI(t *testing.T, scenario string, env ...string) (out string, summary, log []byte) {
	t.Helper()
	out = t.TempDir()
	cmd := exec.Command(llmbenchBin, "run", "--view", "plain", "--output-dir", out, scenario)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llmbench run: %v\n%s", err, log)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "*", "summary.json"))
	if len(paths) != 1 {
		t.Fatalf("summary.json: %v\n%s", paths, log)
	}
	if summary, err = os.ReadFile(paths[0]); err != nil {
		t.Fatal(err)
	}
	return out, summary, log
}
