package quiet

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/selfmon"
)

// TestNeighboursSeesAnotherProcess spins one core in a child process and
// checks that Share counts it: a check that trusts "the machine was quiet"
// must not miss a neighbour that plainly was not.
func TestNeighboursSeesAnotherProcess(t *testing.T) {
	if os.Getenv("QUIET_TEST_SPIN") != "" {
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
		}
		return
	}
	if runtime.GOOS != "linux" {
		if _, ok := WatchNeighbours().Share(); ok {
			t.Fatal("Share claims a measurement where selfmon has none")
		}
		t.Skip("other processes' CPU is measured on Linux only")
	}
	w := WatchNeighbours()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeighboursSeesAnotherProcess$")
	cmd.Env = append(os.Environ(), "QUIET_TEST_SPIN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spinning child: %v\n%s", err, out)
	}
	share, ok := w.Share()
	if !ok {
		t.Fatal("no measurement on Linux")
	}
	cores := selfmon.Since(w.start, selfmon.Take()).HostCores
	// One core busy for about the whole interval: 1/cores of the machine,
	// less the child's start-up; other processes can only add to it.
	if want := 0.6 / float64(cores); share < want {
		t.Errorf("a child spinning one core for 1 s: others' share %.3f, want >= %.3f (%d cores)", share, want, cores)
	}
}
