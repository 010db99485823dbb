package run

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/rundir"
)

// The SSE framings and content codings real servers, gateways and proxies
// send (issue 21 item 6, decisions 0209–0211): the built-in engine's
// faults.wire, each and combined, checked record by record against its
// ground truth; and small hostile servers.

// wireCase is a run against the built-in engine under the faults given
// (the members of a YAML flow map), its records checked against the truth.
func wireCase(name, faults, engine, workload string, check truthCheck) faultCase {
	lines := fmt.Sprintf("  faults: {%s}", faults)
	if engine != "" {
		lines += "\n" + engine
	}
	if workload == "" {
		workload = "  requests: 12"
	}
	return faultCase{name: "sse: " + name, scenario: simYAML(lines, workload), bound: 40 * time.Second, want: completed,
		check: againstTruth(check)}
}

// truthCheck says what a wire case expects beyond the common checks.
type truthCheck struct {
	faults  []string // in every truth's Faults
	wire    string   // every OK record's Wire
	noDone  bool     // every OK record says NoDone
	someBad client.ErrorClass
	maxE2E  time.Duration // every OK record's E2E is below it (0: not checked)
	nonSSE  bool          // not streamed: no chunks to count
}

// againstTruth joins every record to the engine's truth by id: every
// request OK (or failed as someBad, which must happen), and for every OK
// one the server's token counts and finish reason, one chunk per chunk the
// engine flushed, the wire note, and E2E within the bound.
func againstTruth(want truthCheck) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		truths := readJSONL[sim.RequestTruth](t, filepath.Join(fr.dir, rundir.TruthFile))
		byID := map[string]sim.RequestTruth{}
		for _, tr := range truths {
			byID[tr.ID] = tr
		}
		ok, bad := 0, 0
		for _, r := range fr.records {
			tr, found := byID[r.ID]
			if !found {
				t.Errorf("%s: no ground truth", r.ID)
				continue
			}
			for _, f := range want.faults {
				if !slices.Contains(tr.Faults, f) {
					t.Errorf("%s: the engine's faults %v lack %s", r.ID, tr.Faults, f)
				}
			}
			if !r.OK() {
				if want.someBad == "" || r.ErrorClass != want.someBad {
					t.Errorf("%s: %s %q", r.ID, r.ErrorClass, r.Error)
				}
				bad++
				continue
			}
			ok++
			chunks := len(tr.ChunkTokens)
			if want.nonSSE {
				chunks = 0
			}
			if r.OutputTokens != tr.OutputTokens || r.PromptTokens != tr.PromptTokens || r.FinishReason != tr.FinishReason ||
				len(r.Chunks) != chunks || r.TokenSource != client.TokensFromUsage {
				t.Errorf("%s: %d/%d tokens (%s), finish %q, %d chunks; the engine sent %d/%d, %q, %d chunks",
					r.ID, r.PromptTokens, r.OutputTokens, r.TokenSource, r.FinishReason, len(r.Chunks), tr.PromptTokens, tr.OutputTokens, tr.FinishReason, chunks)
			}
			if r.Wire != want.wire || r.NoDone != want.noDone {
				t.Errorf("%s: wire %q, NoDone %v; want %q, %v", r.ID, r.Wire, r.NoDone, want.wire, want.noDone)
			}
			if want.maxE2E > 0 && r.E2E() >= want.maxE2E {
				t.Errorf("%s: E2E %v, not below %v: the lingering connection is counted", r.ID, r.E2E(), want.maxE2E)
			}
			// The engine's own span of the request bounds the client's from
			// below, causally, so the check holds whatever the machine does:
			// the client stamped Sent before the engine's handler began
			// (Arrival), and read the end of the stream (its usage) after the
			// engine stamped its last token's flush, since the engine writes
			// the end only then. (Finish − FirstTokenFlushed was not a bound:
			// the engine stamps a flush once its write returned, and a
			// goroutine held between the two while the client read on
			// stamped the finish 1.5 ms late on CI, beside the matrix's
			// other cases.)
			if n := len(tr.TokenFlushes); !want.nonSSE && n > 0 && r.End-r.Sent <= tr.TokenFlushes[n-1]-tr.Arrival {
				t.Errorf("%s: sent to end %v, not longer than the engine's arrival to last token flush %v", r.ID, r.End-r.Sent, tr.TokenFlushes[n-1]-tr.Arrival)
			}
		}
		if ok == 0 || want.someBad != "" && bad == 0 {
			t.Errorf("%d OK and %d failed as %q", ok, bad, want.someBad)
		}
		if fr.sum.Client.Requests.OK != ok {
			t.Errorf("summary: %d OK, the records %d", fr.sum.Client.Requests.OK, ok)
		}
	}
}

// hostileStream is a good stream of 4 chunks (usage 8/4, finish length),
// framed by frame, ending with [DONE] unless noDone.
func hostileStream(frame func(string) string, noDone bool) string {
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	b.WriteString("data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":4,\"total_tokens\":12}}\n\n")
	if !noDone {
		b.WriteString("data: [DONE]\n\n")
	}
	if frame == nil {
		return b.String()
	}
	return frame(b.String())
}

// serveStream answers with body, each event flushed; coding names a
// Content-Encoding header; linger holds the connection open after it.
func serveStream(body []byte, coding string, linger time.Duration) http.HandlerFunc {
	return engineWith(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if coding != "" {
			w.Header().Set("Content-Encoding", coding)
		}
		_, _ = w.Write(body)
		w.(http.Flusher).Flush()
		if linger > 0 {
			select {
			case <-time.After(linger):
			case <-r.Context().Done():
			}
		}
	}, nil)
}

// everyByte writes body one byte a flush.
func everyByte(body string) http.HandlerFunc {
	return engineWith(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range len(body) {
			_, _ = w.Write([]byte{body[i]})
			w.(http.Flusher).Flush()
		}
	}, nil)
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	_, _ = z.Write([]byte(s))
	_ = z.Close()
	return b.Bytes()
}

// hostileOK checks every record OK with the hostile stream's counts.
func hostileOK(wire string, noDone bool, maxE2E time.Duration) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		for _, r := range rs {
			if !r.OK() || r.OutputTokens != 4 || r.PromptTokens != 8 || len(r.Chunks) != 4 || r.FinishReason != "length" ||
				r.Wire != wire || r.NoDone != noDone || maxE2E > 0 && r.E2E() >= maxE2E {
				t.Errorf("%s: %s %q, %d/%d tokens, %d chunks, finish %q, wire %q, NoDone %v, E2E %v; want OK, 8/4, 4, length, %q, %v, E2E below %v",
					r.ID, r.ErrorClass, r.Error, r.PromptTokens, r.OutputTokens, len(r.Chunks), r.FinishReason, r.Wire, r.NoDone, r.E2E(), wire, noDone, maxE2E)
			}
		}
	}
}

// failedSaying checks every record failed as class with a message holding has.
func failedSaying(class client.ErrorClass, has string) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		for _, r := range rs {
			if r.ErrorClass != class || !strings.Contains(r.Error, has) {
				t.Errorf("%s: %q %q, want %q saying %q", r.ID, r.ErrorClass, r.Error, class, has)
			}
		}
	}
}

func sseFaultCases() []faultCase {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	cr := func(s string) string { return strings.ReplaceAll(s, "\n", "\r") }
	multi := func(s string) string { return strings.ReplaceAll(s, `,"`, ",\ndata:\"") }
	req6 := "  requests: 6"
	const linger = 5 * time.Second
	return []faultCase{
		// The built-in engine, each framing alone.
		wireCase("CRLF line ends", "wire: {line_ending: crlf}", "", "", truthCheck{faults: []string{"wire_crlf"}}),
		wireCase("CR line ends", "wire: {line_ending: cr}", "", "", truthCheck{faults: []string{"wire_cr"}}),
		wireCase("mixed line ends", "wire: {line_ending: mixed}", "", "", truthCheck{faults: []string{"wire_mixed"}}),
		wireCase("a BOM", "wire: {bom: true}", "", "", truthCheck{faults: []string{"wire_bom"}}),
		wireCase("JSON over several data lines", "wire: {multiline_data: true}", "", "", truthCheck{faults: []string{"wire_multiline_data"}}),
		wireCase("event, id, retry, comments, unknown fields", "wire: {extra_fields: true}", "", "", truthCheck{faults: []string{"wire_extra_fields"}}),
		wireCase("gzip though identity was asked", "wire: {content_encoding: gzip}", "", "", truthCheck{faults: []string{"wire_gzip"}, wire: "gzip"}),
		wireCase("deflate (zlib)", "wire: {content_encoding: deflate}", "", "", truthCheck{faults: []string{"wire_deflate"}, wire: "deflate"}),
		wireCase("raw deflate sent as deflate", "wire: {content_encoding: deflate-raw}", "", "", truthCheck{faults: []string{"wire_deflate-raw"}, wire: "deflate-raw"}),
		wireCase("brotli", "wire: {content_encoding: br}", "", "", truthCheck{faults: []string{"wire_br"}, wire: "br"}),
		wireCase("writes split into fragments of up to 3 bytes", "wire: {split_writes: 3}", "", "", truthCheck{faults: []string{"wire_split_writes"}}),
		wireCase("the connection lingers 5 s after [DONE]", "wire: {linger_after_done: 5s}", "", "  requests: 8",
			truthCheck{faults: []string{"wire_linger"}, wire: "linger", maxE2E: linger}),
		// Combined.
		wireCase("lingers 5 s with no [DONE]", "wire: {linger_after_done: 5s}", "  sim: {no_done: true}", "  requests: 8",
			truthCheck{faults: []string{"wire_linger"}, wire: "linger", noDone: true, maxE2E: linger}),
		wireCase("every framing at once, brotli, 5-byte fragments", "wire: {line_ending: mixed, bom: true, multiline_data: true, extra_fields: true, content_encoding: br, split_writes: 5}", "", "",
			truthCheck{faults: []string{"wire_mixed", "wire_bom", "wire_multiline_data", "wire_extra_fields", "wire_br", "wire_split_writes"}, wire: "br"}),
		wireCase("gzip, CRLF, one byte a flush", "wire: {line_ending: crlf, content_encoding: gzip, split_writes: 1}", "", "  requests: 8",
			truthCheck{faults: []string{"wire_crlf", "wire_gzip", "wire_split_writes"}, wire: "gzip"}),
		wireCase("CR, multi-line data and pings", "wire: {line_ending: cr, multiline_data: true}", "  sim: {sse_ping: true}", "",
			truthCheck{faults: []string{"wire_cr", "wire_multiline_data"}}),
		wireCase("vLLM, mixed line ends, deflate", "wire: {line_ending: mixed, content_encoding: deflate}", "  dialect: vllm", "",
			truthCheck{faults: []string{"wire_mixed", "wire_deflate"}, wire: "deflate"}),
		wireCase("several tokens a chunk, extra fields, 2-byte fragments", "wire: {extra_fields: true, split_writes: 2}", "  sim: {stream_interval: 3}", "",
			truthCheck{faults: []string{"wire_extra_fields", "wire_split_writes"}}),
		wireCase("error events inside gzip", "wire: {content_encoding: gzip, line_ending: crlf}, stream_error_rate: 0.4, after_tokens: 2", "", "  requests: 16",
			truthCheck{faults: []string{"wire_gzip"}, wire: "gzip", someBad: client.ErrStreamBroken}),
		wireCase("completions, CR and multi-line data", "wire: {line_ending: cr, multiline_data: true}", "", "  requests: 8\nrequest: {endpoint: completions}",
			truthCheck{faults: []string{"wire_cr", "wire_multiline_data"}}),
		wireCase("not streamed, brotli, split", "wire: {content_encoding: br, split_writes: 7, line_ending: cr}", "", "  requests: 8\nrequest: {stream: false}",
			truthCheck{faults: []string{"wire_br", "wire_split_writes"}, wire: "br", nonSSE: true}),

		// Hostile servers.
		{name: "sse server: BOM and CRLF", server: serveStream([]byte("\xef\xbb\xbf"+hostileStream(crlf, false)), "", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("", false, 0)},
		{name: "sse server: CR only, one byte a flush", server: everyByte(hostileStream(cr, false)),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("", false, 0)},
		{name: "sse server: data split over lines", server: serveStream([]byte(hostileStream(multi, false)), "", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("", false, 0)},
		{name: "sse server: event: error mid-stream", server: serveStream([]byte(strings.Replace(hostileStream(nil, false),
			"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\"", "event: error\ndata: {\"message\":\"upstream overloaded\"}\n\ndata: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\"", 1)), "", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: failed, records: failedSaying(client.ErrStreamBroken, "upstream overloaded")},
		{name: "sse server: other event types between the chunks", server: serveStream([]byte(strings.ReplaceAll(hostileStream(nil, false),
			"\n\ndata: {", "\n\nevent: ping\ndata: keep-alive\n\nid: 9\nretry: 100\n: c\ndata: {")), "", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("", false, 0)},
		{name: "sse server: gzip with its header", server: serveStream(gzipped(hostileStream(nil, false)), "gzip", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("gzip", false, 0)},
		{name: "sse server: gzip without a Content-Encoding header", server: serveStream(gzipped(hostileStream(nil, false)), "", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: failed, records: failedSaying(client.ErrContentEncoding, "no Content-Encoding")},
		{name: "sse server: an unknown content coding", server: serveStream([]byte(hostileStream(nil, false)), "zstd", 0),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: failed, records: failedSaying(client.ErrContentEncoding, `"zstd"`)},
		{name: "sse server: lingers 5 s after [DONE]", server: serveStream([]byte(hostileStream(nil, false)), "", linger),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("linger", false, linger)},
		{name: "sse server: lingers 5 s with no [DONE]", server: serveStream([]byte(hostileStream(nil, true)), "", linger),
			scenario: externalYAML(req6, ""), bound: 30 * time.Second, want: completed, records: hostileOK("linger", true, linger)},
		{name: "sse server: gzip, lingering past the request timeout", server: serveStream(gzipped(hostileStream(nil, false)), "gzip", linger),
			scenario: externalYAML(req6+"\n  timeout: 2s", ""), bound: 30 * time.Second, want: completed, records: hostileOK("gzip linger", false, linger)},
	}
}
