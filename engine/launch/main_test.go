package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// binDir holds the llmbench binary the process tests launch.
var binDir string

func TestMain(m *testing.M) {
	if pidFile := os.Getenv(helperEnv); pidFile != "" {
		runHelper(pidFile) // never returns
	}
	dir, err := os.MkdirTemp("", "llmbench-launch-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// A goroutine left behind is an engine left running: its waiter holds on.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

var (
	buildOnce sync.Once
	buildErr  error
)

// llmbenchBinary builds the repository's own llmbench once per test binary:
// `llmbench serve` is a real OpenAI-compatible engine with /metrics to launch.
func llmbenchBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "llmbench")
	buildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, "github.com/llmbench-org/llmbench/cmd/llmbench").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/llmbench: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// helperEnv makes the test binary a stand-in llmbench that launches an
// engine and waits for it, to be killed by the test.
const helperEnv = "LLMBENCH_LAUNCH_TEST_HELPER"

// helperTreeEnv makes the helper's engine a process tree, as a multi-process
// engine is: a shell that starts a background child (its pid in
// pidFile+".child") before it becomes a sleep itself, logging into
// engine.log beside pidFile (so its GroupFile goes there too).
const helperTreeEnv = "LLMBENCH_LAUNCH_TEST_HELPER_TREE"

// runHelper launches an engine that never becomes ready and writes its pid.
func runHelper(pidFile string) {
	cfg := Config{Kind: KindCommand, Command: []string{"sh", "-c", `echo $$ > "$0"; exec sleep 600`, pidFile}, Ready: time.Minute}
	if os.Getenv(helperTreeEnv) != "" {
		cfg.Command[2] = `sleep 600 & echo $! > "$0.child"; echo $$ > "$0"; exec sleep 600`
		cfg.LogPath = filepath.Join(filepath.Dir(pidFile), "engine.log")
	}
	e, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, err = e.Start(context.Background())
	fmt.Fprintln(os.Stderr, "helper: Start returned:", err)
	os.Exit(1)
}
