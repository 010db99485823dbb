package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// Window is one of the run's sinks (run.Sink): records and rows arrive one
// at a time on the run's consumer goroutine.
var _ interface {
	Record(client.Record) error
	Row(scrape.Row) error
	Close() error
} = (*Window)(nil)

// What the window is fed shows in its next snapshot: counts, the in-flight
// requests, the phase, the engine's gauges, and a failed scrape's error
// redacted (every frame shows it).
func TestWindowFoldsRecordsAndRows(t *testing.T) {
	t.Parallel()
	w := NewWindow(time.Now().Add(-time.Second))
	w.SetPhase("main")
	for range 3 {
		w.Begin()
	}
	w.End()
	if err := w.Record(rec(10*msec, 50*msec, 4)); err != nil {
		t.Fatal(err)
	}
	gauges := map[scrape.Concept]float64{scrape.RequestsRunning: 2}
	if err := w.Row(scrape.Row{OK: true, Snapshot: &scrape.Snapshot{Gauges: gauges}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Row(scrape.Row{Error: `Get "http://u:pw@e/metrics?token=t": refused`}); err != nil {
		t.Fatal(err)
	}
	p := w.Progress()
	if p.Phase != "main" || p.Sent != 3 || p.InFlight != 2 || p.OK != 1 || p.TTFT.N != 1 {
		t.Errorf("phase %q sent %d in flight %d ok %d ttft n %d: want main, 3, 2, 1, 1", p.Phase, p.Sent, p.InFlight, p.OK, p.TTFT.N)
	}
	if !p.Server.HasRunning || p.Server.Running != 2 || p.ScrapeOK != 1 || p.ScrapeFailures != 1 {
		t.Errorf("server %+v, scrapes %d ok %d failed", p.Server, p.ScrapeOK, p.ScrapeFailures)
	}
	if strings.Contains(p.LastScrapeErr, "pw") || strings.Contains(p.LastScrapeErr, "=t") || !strings.Contains(p.LastScrapeErr, "REDACTED") {
		t.Errorf("last scrape error not redacted: %q", p.LastScrapeErr)
	}
}
