//go:build linux

package rundir

import (
	"os"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

// A full disk: the first write that fails breaks the writer at once (the
// run stops on Broken) and Record returns the error, instead of the run
// carrying on measuring what it cannot keep. /dev/full answers every write
// with ENOSPC.
func TestFullDiskBreaksTheWriter(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	w, err := New(t.TempDir() + "/run")
	if err != nil {
		t.Fatal(err)
	}
	w.requests.Close()
	w.requests = full
	select {
	case <-w.Broken():
		t.Fatal("broken before any write")
	default:
	}
	err = w.Record(client.Record{ID: "r-0"})
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("Record = %v, want the full disk named", err)
	}
	select {
	case <-w.Broken():
	default:
		t.Error("a failed write did not break the writer")
	}
}
