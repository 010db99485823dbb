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
	spinChild(t)
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

// TestShareBesidesChildren: a child process this one ran and waited for is
// not a neighbour for ShareBesidesChildren (a test's engine run apart), while
// Share counts it.
func TestShareBesidesChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("other processes' CPU is measured on Linux only")
	}
	w := WatchNeighbours()
	cmd := spinChild(t)
	all, ok1 := w.Share()
	besides, ok2 := w.ShareBesidesChildren()
	if !ok1 || !ok2 {
		t.Fatal("no measurement on Linux")
	}
	// What the child used, as a share of the machine over the interval (a
	// little less than the one measured: the interval is read later).
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	cores := selfmon.Since(w.start, selfmon.Take()).HostCores
	child := used.Seconds() / (time.Since(w.began).Seconds() * float64(cores))
	if used < 100*time.Millisecond {
		t.Fatalf("the child spun for %v of CPU only: nothing to tell apart", used)
	}
	// Share keeps the child (up to a machine kept all busy: Share is at most
	// 1); ShareBesidesChildren leaves it out, to the clock tick (10 ms).
	if want := min(child, all) - 0.02; all-besides < want {
		t.Errorf("others' share %.3f with the child, %.3f without: want them %.3f apart, the child's share (%v of CPU on %d cores)", all, besides, want+0.02, used, cores)
	}
}

// spinChild runs this test binary as a child that spins one core for about
// a second, and waits for it.
func spinChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeighboursSeesAnotherProcess$")
	cmd.Env = append(os.Environ(), "QUIET_TEST_SPIN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spinning child: %v\n%s", err, out)
	}
	return cmd
}
