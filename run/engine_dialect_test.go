package run

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestDetectDialectOutlastsTheScrapeTimeout: the one look that detects the
// dialect before the load is not bound by the scrape's timeout (at most the
// scrape interval). .ci/busy-test found a run against an external engine
// with a 200-ms interval that went without its dialect when the page took
// longer than that; here the page takes 200 ms, four times the scrape's
// timeout.
func TestDetectDialectOutlastsTheScrapeTimeout(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond)
		forwardMetrics(w, r, ep.MetricsURL)
	}))
	t.Cleanup(slow.Close)
	got, err := detectDialect(context.Background(), scrape.Targets{{URL: slow.URL + "/metrics", Timeout: 50 * time.Millisecond}})
	if err != nil || got != sim.DialectVLLM {
		t.Errorf("detected %q, %v; want %s (the page came after 200 ms, within the detection's own bound)", got, err, sim.DialectVLLM)
	}
}

// TestDetectDialectFailureIsSaid: a page that cannot be read is an error
// (the run says so in its notes), not a silent "no dialect".
func TestDetectDialectFailureIsSaid(t *testing.T) {
	t.Parallel()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	got, err := detectDialect(context.Background(), scrape.Targets{{URL: broken.URL + "/metrics"}})
	if got != "" || err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("detected %q, %v; want no dialect and an error naming the 500", got, err)
	}
}
