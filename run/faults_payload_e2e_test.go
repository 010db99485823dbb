package run

import (
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

// What chunks say: content parts, n > 1, error shapes, usage claims and
// protocol violations (issue 21 items 2 and 6), each checked against the
// built-in engine's ground truth where the engine makes the shape, and
// against what a small hostile server sent where it cannot.
func payloadFaultCases() []faultCase {
	req24 := "  requests: 24"
	var cases []faultCase
	// Every error shape, as an HTTP error answer: the server's words kept.
	for _, shape := range sim.ErrorShapes() {
		cases = append(cases, faultCase{name: "sim payload: error bodies shaped " + shape,
			scenario: simYAML("  faults: {error_rate: 0.4, error_statuses: [503], payload: {error_shape: "+shape+"}}", req24),
			bound:    30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				someFailedAs(client.ErrHTTPStatus)(t, rs)
				for _, r := range rs {
					if !r.OK() && !strings.Contains(r.Error, "injected fault: 503 Service Unavailable") {
						t.Errorf("%s: %q: the server's message is lost", r.ID, r.Error)
					}
				}
			},
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if !r.OK() && tr.ErrorShape != shape {
					t.Errorf("%s: truth says shape %q", r.ID, tr.ErrorShape)
				}
			})})
	}
	// Error events mid-stream in the JSON shapes, and in shapes that are
	// not JSON (a proxy's text or page in the stream: a malformed chunk,
	// its text quoted).
	for _, shape := range []string{"bare", "detail", "string", "indented"} {
		cases = append(cases, faultCase{name: "sim payload: error events shaped " + shape,
			scenario: simYAML("  faults: {stream_error_rate: 0.4, after_tokens: 2, payload: {error_shape: "+shape+"}}", req24),
			bound:    30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				someFailedAs(client.ErrStreamBroken)(t, rs)
				for _, r := range rs {
					if !r.OK() && (!strings.Contains(r.Error, "injected fault: error event mid-stream") || len(r.Chunks) != 2) {
						t.Errorf("%s: %q with %d chunks: want the server's message and the 2 chunks before it", r.ID, r.Error, len(r.Chunks))
					}
				}
			}})
	}
	cases = append(cases, faultCase{name: "sim payload: an HTML page mid-stream",
		scenario: simYAML("  faults: {stream_error_rate: 0.4, after_tokens: 2, payload: {error_shape: html}}", req24),
		bound:    30 * time.Second, want: completed, records: someFailedAs(client.ErrMalformedChunk)})

	cases = append(cases,
		faultCase{name: "sim payload: content as parts arrays", scenario: simYAML("  faults: {payload: {content_parts: 1}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if !slices.Contains(tr.Faults, sim.FaultContentParts) || len(r.Chunks) != len(tr.ChunkTokens) ||
					r.OutputTokens != tr.OutputTokens || r.FirstContent == 0 {
					t.Errorf("%s: %d chunks, %d tokens, first content %v; truth %d chunks, %d tokens, faults %v",
						r.ID, len(r.Chunks), r.OutputTokens, r.FirstContent, len(tr.ChunkTokens), tr.OutputTokens, tr.Faults)
				}
			})},
		faultCase{name: "sim payload: parts in whole responses", scenario: simYAML("  faults: {payload: {content_parts: 1}}", req24+"\nrequest: {stream: false}"),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if r.OutputTokens != tr.OutputTokens || r.TokenSource != client.TokensFromUsage {
					t.Errorf("%s: %d tokens from %q; truth %d", r.ID, r.OutputTokens, r.TokenSource, tr.OutputTokens)
				}
			})},
		// 10¹⁸ claimed completion tokens: flagged, the chunks counted, and
		// memory bounded (one ITL per claimed token was 3 GB in seconds).
		faultCase{name: "sim payload: usage claims 10^18 tokens", scenario: simYAML("  faults: {payload: {usage_claim: {kind: huge, rate: 1}}}", req24),
			bound: 30 * time.Second, want: completed, heap: 256 << 20, records: allOK,
			check: func(t *testing.T, fr faultRun) {
				claimed(sim.ClaimHuge, client.ViolationUsageBeyondCap)(t, fr)
				if fr.sum.Health.ProtocolViolations[string(client.ViolationUsageBeyondCap)] == 0 || !hasFinding(fr, "protocol_violations") {
					t.Errorf("health %v, findings %v: want the violations counted and named", fr.sum.Health.ProtocolViolations, fr.sum.Findings)
				}
			}},
		faultCase{name: "sim payload: negative usage", scenario: simYAML("  faults: {payload: {usage_claim: {kind: negative, rate: 1}}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: func(t *testing.T, fr faultRun) {
				claimed(sim.ClaimNegative, client.ViolationUsageNegative)(t, fr)
				if th := fr.sum.Client.Throughput; th.OutputTokensPerSec <= 0 || th.TotalTokensPerSec <= 0 {
					t.Errorf("throughput %+v: want the counted chunks' positive rate", th)
				}
			}},
		faultCase{name: "sim payload: a usage that goes backwards", scenario: simYAML("  faults: {payload: {usage_claim: {kind: backwards, rate: 1}}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK, check: claimed(sim.ClaimBackwards, client.ViolationUsageBackwards)},
		faultCase{name: "sim payload: half the usages claimed huge", scenario: simYAML("  faults: {payload: {usage_claim: {kind: huge, rate: 0.5}}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK, check: claimed(sim.ClaimHuge, client.ViolationUsageBeyondCap)},
		faultCase{name: "sim payload: chunks after finish_reason", scenario: simYAML("  faults: {payload: {chunks_after_finish: {count: 3, rate: 0.5}}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				flagged := r.HasViolation(client.ViolationChunkAfterFinish)
				if flagged != (tr.ChunksAfterFinish > 0) || len(r.Chunks) != len(tr.ChunkTokens) || r.OutputTokens != tr.OutputTokens {
					t.Errorf("%s: flagged %t, %d chunks, %d tokens; truth %d after the finish, %d chunks, %d tokens",
						r.ID, flagged, len(r.Chunks), r.OutputTokens, tr.ChunksAfterFinish, len(tr.ChunkTokens), tr.OutputTokens)
				}
			})},
		// n > 1 end to end: the scenario asks n: 2 through extra_body.
		faultCase{name: "sim payload: two choices a request (n: 2)", scenario: simYAML("  sim: {decode_base: 5ms}\n  faults: {payload: {choices: 2}}", req24+"\nrequest: {extra_body: {n: 2}}"),
			bound: 30 * time.Second, want: completed, records: allOK, check: twoChoices},
		faultCase{name: "sim payload: two choices, whole responses", scenario: simYAML("  faults: {payload: {choices: 2}}", req24+"\nrequest: {stream: false, extra_body: {n: 2}}"),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if tr.Choices != 2 || r.OutputTokens != tr.OutputTokens || r.Choices != 2 {
					t.Errorf("%s: %d tokens, choices %d; truth %d tokens, %d choices", r.ID, r.OutputTokens, r.Choices, tr.OutputTokens, tr.Choices)
				}
			})},
		// A server that answers choices nobody asked for: flagged, not
		// measured, its usage (which counts them) not used.
		faultCase{name: "sim payload: three choices unasked", scenario: simYAML("  faults: {payload: {choices: 3}}", req24),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if !r.HasViolation(client.ViolationChoiceIndex) || r.OutputTokens != tr.OutputTokens/3 || r.TokenSource != client.TokensFromChunks {
					t.Errorf("%s: %q, %d tokens from %q; truth %d over 3 choices", r.ID, r.Violations, r.OutputTokens, r.TokenSource, tr.OutputTokens)
				}
			})},
		faultCase{name: "sim payload: every payload fault at once (llama.cpp)", scenario: simYAML(
			"  dialect: llamacpp\n  faults: {payload: {content_parts: 1, chunks_after_finish: {count: 2, rate: 1}, usage_claim: {kind: huge, rate: 0.5}, choices: 2}}",
			req24+"\nrequest: {extra_body: {n: 2}}"),
			bound: 30 * time.Second, want: completed, records: allOK,
			check: truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
				if r.Choices != 2 || !r.HasViolation(client.ViolationChunkAfterFinish) || len(r.Chunks) != 2*len(tr.ChunkTokens) ||
					r.HasViolation(client.ViolationUsageBeyondCap) != (tr.UsageClaim != "") {
					t.Errorf("%s: choices %d, violations %q, %d chunks; truth %+v", r.ID, r.Choices, r.Violations, len(r.Chunks), tr)
				}
			})},
	)
	return append(cases, hostilePayloadCases()...)
}

// hostilePayloadCases are shapes the built-in engine does not make.
func hostilePayloadCases() []faultCase {
	ext := externalYAML("  requests: 8", "")
	usage := func(members string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 4 {
				fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
			}
			fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[],\"usage\":{%s}}\n\ndata: [DONE]\n\n", members)
		}
	}
	flagged := func(v client.Violation) func(*testing.T, []client.Record) {
		return func(t *testing.T, rs []client.Record) {
			for _, r := range rs {
				if !r.OK() || !r.HasViolation(v) || r.OutputTokens != 4 || r.TokenSource != client.TokensFromChunks || r.PromptTokens != 0 {
					t.Errorf("%s: %q %q, violations %q, %d tokens from %q, prompt %d: want %s flagged and the 4 chunks counted",
						r.ID, r.ErrorClass, r.Error, r.Violations, r.OutputTokens, r.TokenSource, r.PromptTokens, v)
				}
			}
		}
	}
	errorBody := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	messageKept := func(want string) func(*testing.T, []client.Record) {
		return func(t *testing.T, rs []client.Record) {
			for _, r := range rs {
				if r.OK() || !strings.Contains(r.Error, want) || strings.ContainsAny(r.Error, "\x1b\x07\n") {
					t.Errorf("%s: %q %q: want a failure keeping %q on one printable line", r.ID, r.ErrorClass, r.Error, want)
				}
			}
		}
	}
	return []faultCase{
		{name: "server: usage 1e18 (an exponent)", server: engineWith(usage(`"prompt_tokens":8,"completion_tokens":1e18`), nil), scenario: ext,
			bound: 30 * time.Second, want: completed, records: flagged(client.ViolationUsageInvalid)},
		{name: "server: usage as a fraction", server: engineWith(usage(`"prompt_tokens":8,"completion_tokens":4.5`), nil), scenario: ext,
			bound: 30 * time.Second, want: completed, records: flagged(client.ViolationUsageInvalid)},
		{name: "server: usage beyond int64", server: engineWith(usage(`"prompt_tokens":8,"completion_tokens":123456789012345678901234567890`), nil), scenario: ext,
			bound: 30 * time.Second, want: completed, records: flagged(client.ViolationUsageInvalid)},
		{name: "server: a prompt of 10^12 tokens", server: engineWith(usage(`"prompt_tokens":1000000000000,"completion_tokens":4`), nil), scenario: ext,
			bound: 30 * time.Second, want: completed, records: flagged(client.ViolationUsageBeyondCap)},
		{name: "server: negative prompt tokens", server: engineWith(usage(`"prompt_tokens":-8,"completion_tokens":4`), nil), scenario: ext,
			bound: 30 * time.Second, want: completed, records: flagged(client.ViolationUsageNegative)},
		// A running usage that claims 10^17 more tokens every chunk: the
		// heap stays bounded.
		{name: "server: a running usage 10^17 a chunk", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 4 {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w \"}}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d00000000000000000}}\n\n", i+1)
			}
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":400000000000000000}}\n\ndata: [DONE]\n\n")
		}, nil), scenario: ext, bound: 30 * time.Second, want: completed, heap: 256 << 20, records: flagged(client.ViolationUsageBeyondCap)},
		{name: "server: a choice index nobody asked for", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a \"}}]}\n\n"+
				"data: {\"choices\":[{\"index\":7,\"delta\":{\"content\":\"b \"}}]}\n\n"+
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		}, nil), scenario: ext, bound: 30 * time.Second, want: completed, records: func(t *testing.T, rs []client.Record) {
			for _, r := range rs {
				if !r.OK() || len(r.Chunks) != 1 || !r.HasViolation(client.ViolationChoiceIndex) {
					t.Errorf("%s: %q, %d chunks, violations %q", r.ID, r.ErrorClass, len(r.Chunks), r.Violations)
				}
			}
		}},
		{name: "server: FastAPI validation errors", server: engineWith(errorBody(422,
			`{"detail":[{"loc":["body","max_tokens"],"msg":"Input should be a valid integer","type":"int_parsing"}]}`), nil),
			scenario: ext, bound: 30 * time.Second, want: failed, records: messageKept("body.max_tokens: Input should be a valid integer")},
		{name: "server: an unwrapped vLLM error mid-stream", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a \"}}]}\n\n"+
				"data: {\"object\":\"error\",\"message\":\"The decoder prompt is too long\",\"type\":\"BadRequestError\",\"code\":400}\n\n")
		}, nil), scenario: ext, bound: 30 * time.Second, want: failed, records: messageKept("The decoder prompt is too long (type BadRequestError, code 400)")},
		{name: "server: a gateway's HTML page with escapes", server: engineWith(errorBody(502,
			"<html><head><title>502</title><script>x()</script></head><body><h1>Bad \x1b]0;pwned\x07Gateway</h1></body></html>"), nil),
			scenario: ext, bound: 30 * time.Second, want: failed, records: messageKept("502 Bad ]0;pwned Gateway")},
		{name: "server: content parts and an index per choice", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range []int{0, 1, 0, 1} {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":%d,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"w \"}]}}]}\n\n", c)
			}
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"},{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n")
		}, nil), scenario: externalYAML("  requests: 8", "request: {extra_body: {n: 2}}"), bound: 30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if !r.OK() || r.Choices != 2 || len(r.ITLs(nil)) != 2 || r.OutputTokens != 4 || r.Violations != nil {
						t.Errorf("%s: %q %q, choices %d, %d ITLs, %d tokens, violations %q", r.ID, r.ErrorClass, r.Error, r.Choices, len(r.ITLs(nil)), r.OutputTokens, r.Violations)
					}
				}
			}},
	}
}

// truthJoin checks every record (but canceled ones) against its ground
// truth, joined by id, or by the chunks' id where the dialect takes none
// (llama.cpp).
func truthJoin(each func(t *testing.T, r client.Record, tr sim.RequestTruth)) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		truths := readJSONL[sim.RequestTruth](t, filepath.Join(fr.dir, rundir.TruthFile))
		byID := map[string]sim.RequestTruth{}
		for _, tr := range truths {
			byID[tr.ID] = tr
			byID["chunk:"+tr.ChunkID] = tr
		}
		joined := 0
		for _, r := range fr.records {
			tr, ok := byID[r.ID]
			if !ok && r.ServerID != "" {
				tr, ok = byID["chunk:"+r.ServerID]
			}
			if !ok || r.ErrorClass == client.ErrCanceled {
				continue
			}
			joined++
			each(t, r, tr)
		}
		if joined == 0 {
			t.Error("no record joined to the ground truth")
		}
	}
}

// claimed checks that every stream the truth says made a usage claim of
// kind is flagged v and counted from its chunks (what truth says it sent),
// and no other is flagged.
func claimed(kind string, v client.Violation) func(*testing.T, faultRun) {
	return truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
		hit := tr.UsageClaim == kind
		if r.HasViolation(v) != hit {
			t.Errorf("%s: violations %q, truth claim %q", r.ID, r.Violations, tr.UsageClaim)
		}
		if r.OutputTokens != tr.OutputTokens || r.OutputTokens < 0 || (hit && r.TokenSource != client.TokensFromChunks) {
			t.Errorf("%s: %d tokens from %q; truth %d", r.ID, r.OutputTokens, r.TokenSource, tr.OutputTokens)
		}
		if hit && len(r.ITLs(nil)) > r.MaxTokens {
			t.Errorf("%s: %d ITLs for max_tokens %d", r.ID, len(r.ITLs(nil)), r.MaxTokens)
		}
	})
}

// twoChoices checks n: 2 against truth: both choices measured, TTFT the
// first output of either, each choice's ITLs its own sequence's.
func twoChoices(t *testing.T, fr faultRun) {
	truthJoin(func(t *testing.T, r client.Record, tr sim.RequestTruth) {
		if r.Choices != 2 || tr.Choices != 2 || r.OutputTokens != tr.OutputTokens || len(r.Chunks) != 2*len(tr.ChunkTokens) {
			t.Errorf("%s: choices %d, %d tokens, %d chunks; truth %d choices, %d tokens, %d chunks a choice",
				r.ID, r.Choices, r.OutputTokens, len(r.Chunks), tr.Choices, tr.OutputTokens, len(tr.ChunkTokens))
			return
		}
		// Exact, whatever the machine: each choice is its own sequence of
		// the truth's chunks, and the mean ITL is each choice's span from
		// its first chunk to its last over the tokens after each first, as
		// the record's own arrival times give them. Interleaved (one
		// sequence of both choices' chunks), the span would be divided by
		// about twice the tokens.
		var first, last [2]time.Duration
		var chunks [2]int
		tokens := 0
		for _, ch := range r.Chunks {
			c := ch.Choice
			if c < 0 || c > 1 {
				t.Errorf("%s: a chunk of choice %d, want 0 or 1", r.ID, c)
				return
			}
			if chunks[c] == 0 {
				first[c] = ch.At
			} else {
				tokens += int(max(ch.Tokens, 1))
			}
			chunks[c]++
			last[c] = ch.At
		}
		mean, ok := r.MeanITL()
		if chunks[0] != len(tr.ChunkTokens) || chunks[1] != len(tr.ChunkTokens) {
			t.Errorf("%s: %d and %d chunks in the two choices, truth %d each", r.ID, chunks[0], chunks[1], len(tr.ChunkTokens))
			return
		}
		if want := (last[0] - first[0] + last[1] - first[1]) / time.Duration(tokens); !ok || mean != want {
			t.Errorf("%s: mean ITL %v (ok %v), want each choice's own: %v over %d tokens", r.ID, mean, ok, want, tokens)
		}
		// Real time (fr.timed): each choice's span is the sequence's, the
		// truth's first to last flush, give or take the loopback's noise.
		// The engine stamps a flush after its write returns, and the client
		// a chunk when its goroutine reads it: beside two CPU hogs under
		// -race one waited 80 ms more for the first chunks than for the
		// last (11.4 ms a token against the truth's 16.7), a delay of the
		// host's that the record cannot tell from a span that is short.
		flushes := tr.TokenFlushes
		truthMean := (flushes[len(flushes)-1] - flushes[0]) / time.Duration(len(flushes)-1)
		if mean < truthMean*3/4 {
			fr.timed("%s: mean ITL %v, truth %v a token of each choice", r.ID, mean, truthMean)
		}
	})(t, fr)
}

// hasFinding reports a finding of the summary with id.
func hasFinding(fr faultRun, id string) bool {
	for _, f := range fr.sum.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}
