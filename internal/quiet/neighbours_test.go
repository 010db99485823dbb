package quiet

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/selfmon"
)

// spinCPU is the CPU time the spinning child uses: an amount of work, not of
// wall time, so that the child is as plain a neighbour on a busy machine,
// where it gets a fraction of a core, as on a quiet one.
const spinCPU = 200 * time.Millisecond

// TestNeighboursSeesAnotherProcess spins one core in a child process and
// checks that Share counts it: a check that trusts "the machine was quiet"
// must not miss a neighbour that plainly was not.
func TestNeighboursSeesAnotherProcess(t *testing.T) {
	if os.Getenv("QUIET_TEST_SPIN") != "" {
		// Until the child has used spinCPU (a minute at most, where the
		// platform does not measure it: the parent skips there anyway).
		for end := time.Now().Add(time.Minute); selfCPU() < spinCPU && time.Now().Before(end); {
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
	cmd := spinChild(t)
	interval := time.Since(w.began) // a little shorter than Share's
	share, ok := w.Share()
	if !ok {
		t.Fatal("no measurement on Linux")
	}
	cores := selfmon.Since(w.start, selfmon.Take()).HostCores
	// Others' CPU over the interval holds the child's, whatever else ran
	// (other processes can only add to it), to the kernel's accounting: a
	// clock tick (10 ms) per core at each end.
	others := time.Duration(share * float64(interval) * float64(cores))
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if tick := 10 * time.Millisecond * time.Duration(2*cores); others < used-tick {
		t.Errorf("a child that used %v of CPU: others' share %.3f over %v on %d cores, %v of CPU, want at least the child's (to %v)",
			used, share, interval, cores, others, tick)
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

// spinChild runs this test binary as a child that spins one core until it
// has used spinCPU, and waits for it.
func spinChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeighboursSeesAnotherProcess$")
	cmd.Env = append(os.Environ(), "QUIET_TEST_SPIN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spinning child: %v\n%s", err, out)
	}
	return cmd
}
