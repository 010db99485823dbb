package sglang

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// installHint is how a developer gets what the tests need.
const installHint = "eval \"$(bash .ci/real-sglang/install)\" && export LLMBENCH_SGLANG_PYTHON LLMBENCH_SGLANG_MODEL"

// contextLen is the context both engines are given.
const contextLen = 512

// startLimit bounds the real SGLang's start: it answered /health 36-62 s
// after launch on a 2-core machine shared with other work (decision 2230).
const startLimit = 5 * time.Minute

// target is one engine under comparison: the real SGLang or the built-in
// engine speaking its dialect. exportDir is where it writes the
// per-request metrics export.
type target struct {
	name, root, model, exportDir string
}

var (
	real, emulated target
	// missing says why there is no real SGLang ("" = it runs); tests call need.
	missing string
	client  = &http.Client{Timeout: 2 * time.Minute}
)

func TestMain(m *testing.M) { os.Exit(runAll(m)) }

// runAll starts both engines once for the whole package, runs the tests and
// stops them: the real one is killed and reaped with its process group
// (engine/launch) whatever the tests did.
func runAll(m *testing.M) int {
	dir, err := os.MkdirTemp("", "llmbench-sglang-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	p, err := sim.Preset("tiny")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p.MaxModelLen = contextLen
	simExport := filepath.Join(dir, "sim-export")
	se, err := sim.New(sim.Config{Dialect: sim.DialectSGLang, Model: "tiny", Params: p, SGLangExportDir: simExport})
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
	emulated = target{name: "built-in sglang dialect", root: rootOf(sep.BaseURL), model: "tiny", exportDir: simExport}

	py, model := os.Getenv("LLMBENCH_SGLANG_PYTHON"), os.Getenv("LLMBENCH_SGLANG_MODEL")
	if py == "" || model == "" {
		missing = "LLMBENCH_SGLANG_PYTHON and LLMBENCH_SGLANG_MODEL are not set; install SGLang and the tiny model with: " + installHint
		return m.Run()
	}
	realExport := filepath.Join(dir, "real-export")
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("llmbench-sglang-conformance-%d.log", os.Getpid()))
	le, err := launch.New(launch.Config{
		Kind: "sglang",
		// Not SGLANG_USE_CPU_ENGINE=1: SGLang's CPU engine needs
		// sgl_kernel's CPU build, which no registry here carries; the
		// generic path with the torch_native attention backend serves the
		// same API (decision 2230).
		Command: []string{py, "-m", "sglang.launch_server", "--model-path", "{model}",
			"--served-model-name", "tiny", "--host", "{host}", "--port", "{port}",
			"--device", "cpu", "--attention-backend", "torch_native", "--disable-overlap-schedule",
			"--context-length", fmt.Sprint(contextLen), "--max-total-tokens", "4096", "--dtype", "float32",
			"--enable-metrics", "--export-metrics-to-file", "--export-metrics-to-file-dir", realExport},
		Model:   model,
		Env:     []string{"HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1"},
		Ready:   startLimit,
		LogPath: logPath,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer quiet.BusyMain()()
	began := time.Now()
	ep, err := le.Start(context.Background())
	if err != nil {
		missing = fmt.Sprintf("the real SGLang did not start within %v: %v", startLimit, err)
		return m.Run()
	}
	defer stop(le.Stop)
	fmt.Fprintf(os.Stderr, "real SGLang ready after %v at %s\n", time.Since(began).Round(time.Second), ep.BaseURL)
	real = target{name: "real SGLang", root: rootOf(ep.BaseURL), model: "tiny", exportDir: realExport}
	code := m.Run()
	if code == 0 {
		_ = os.Remove(logPath)
	} else {
		fmt.Fprintln(os.Stderr, "the real SGLang's output:", logPath)
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
func rootOf(base string) string {
	const v1 = "/v1"
	if len(base) >= len(v1) && base[len(base)-len(v1):] == v1 {
		return base[:len(base)-len(v1)]
	}
	return base
}

// both returns the two targets after checking the real one runs.
func both(t *testing.T) []target {
	t.Helper()
	if missing != "" {
		realtest.Missing(t, missing)
	}
	return []target{real, emulated}
}
