package selfmetrics_test

import (
	"context"
	"fmt"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/selfmetrics"
)

// How a run uses the exporter: serve it, mark phases, and call Begin, End
// and Observe once per request (never per chunk), ObserveScrape once per
// engine scrape.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the server

	m := selfmetrics.New()
	addr, err := m.Serve(ctx, "127.0.0.1:0") // a Prometheus scrapes http://addr/metrics
	if err != nil {
		panic(err)
	}
	_ = addr

	m.SetPhase("measure")
	m.Begin() // the request is sent
	rec := &client.Record{Sent: 1e6, FirstToken: 50e6, End: 300e6, OutputTokens: 10}
	m.End() // it finished
	m.Observe(rec)
	m.ObserveScrape(true)
	fmt.Println("ok")
	// Output: ok
}
