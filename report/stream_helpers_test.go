package report

import (
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// requestsOf wraps records as the summary's internal views hold them.
func requestsOf(records []client.Record) []request {
	out := make([]request, len(records))
	for i := range records {
		out[i] = request{Record: &records[i]}
	}
	return out
}

// clientSideOf is clientSide over records that still have their chunks.
func clientSideOf(records []client.Record, dur time.Duration, ps []float64) ClientSide {
	req := rundir.DigestRecords(slices.Clone(records), nil)
	rs := make([]request, len(req.Records))
	for i := range req.Records {
		rs[i] = request{&req.Records[i], req.Chunks[i]}
	}
	return clientSide(rs, req.Digest.Of(nil), dur, ps)
}
