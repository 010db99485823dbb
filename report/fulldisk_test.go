//go:build linux

package report

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// A full disk: the first write that fails breaks the recorder at once (the
// run stops on Broken) and Consume returns the error, instead of the run
// carrying on measuring what it cannot keep. /dev/full answers every write
// with ENOSPC.
func TestFullDiskBreaksTheRecorder(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	rec, err := NewRecorder(t.TempDir()+"/run", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec.requests.Close()
	rec.requests = full
	records := make(chan client.Record, 1)
	rows := make(chan scrape.Row)
	records <- client.Record{ID: "r-0"}
	close(records)
	close(rows)
	select {
	case <-rec.Broken():
		t.Fatal("broken before any write")
	default:
	}
	err = rec.Consume(records, rows)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("Consume = %v, want the full disk named", err)
	}
	select {
	case <-rec.Broken():
	default:
		t.Error("a failed write did not break the recorder")
	}
}
