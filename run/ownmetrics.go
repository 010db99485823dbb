package run

import (
	"context"
	"fmt"
	"io"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/selfmetrics"
)

// ownMetrics is llmbench's own Prometheus /metrics (package selfmetrics,
// Config.MetricsAddr) as an output of the run: a Sink of finished requests
// (by outcome, latencies) and scrapes (by result), and, through the embedded
// exporter's Begin, End and SetPhase, a RequestObserver (the in-flight
// gauge) and a PhaseObserver (the current phase).
type ownMetrics struct{ *selfmetrics.Metrics }

// serveOwnMetrics serves llmbench's own metrics at addr until ctx ends.
func serveOwnMetrics(ctx context.Context, addr string, log io.Writer) (ownMetrics, error) {
	m := selfmetrics.New()
	bound, err := m.Serve(ctx, addr)
	if err != nil {
		return ownMetrics{}, fmt.Errorf("serve llmbench's own metrics at %s: %w", addr, err)
	}
	fmt.Fprintf(log, "llmbench: its own metrics at http://%s/metrics\n", bound)
	return ownMetrics{m}, nil
}

func (o ownMetrics) Record(r client.Record) error { o.Observe(&r); return nil }
func (o ownMetrics) Row(r scrape.Row) error       { o.ObserveScrape(r.OK); return nil }

// Close leaves the server up: it serves the run's last values until Run
// returns (its context ends).
func (o ownMetrics) Close() error   { return nil }
func (o ownMetrics) String() string { return "llmbench's own metrics" }
