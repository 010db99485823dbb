package client

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Streams as real engines send them: reasoning and tool-call deltas, streams
// without [DONE], error events after comments, chunks of several tokens.

// deltaEvent is a chunk whose delta is the given JSON object.
func deltaEvent(id, delta string) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n", id, delta)
}

const toolDelta = `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`

func TestDoOutputKinds(t *testing.T) {
	t.Parallel()
	reasoningUsage := `data: {"id":"s","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":2}}}` + "\n\n"
	tests := []struct {
		name      string
		events    []string
		chunks    int
		ttfcChunk int // index of the chunk whose time is FirstContent, -1 for none
		reasoning int
	}{
		{
			name: "reasoning_content then content",
			events: []string{roleEvent("s"), deltaEvent("s", `{"reasoning_content":"hm"}`), deltaEvent("s", `{"reasoning_content":"so"}`),
				contentEvent("s", "a"), contentEvent("s", "b"), finishEvent("s", "stop"), reasoningUsage, doneEvent},
			chunks: 4, ttfcChunk: 2, reasoning: 2,
		},
		{
			name: "reasoning (newer vLLM) then content",
			events: []string{deltaEvent("s", `{"reasoning":"hm","content":null}`), deltaEvent("s", `{"content":"a"}`),
				finishEvent("s", "stop"), doneEvent},
			chunks: 2, ttfcChunk: 1,
		},
		{
			name: "tool calls only",
			events: []string{roleEvent("s"), deltaEvent("s", toolDelta),
				deltaEvent("s", `{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`),
				deltaEvent("s", `{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`),
				finishEvent("s", "tool_calls"), doneEvent},
			chunks: 3, ttfcChunk: -1,
		},
		{
			name:   "content then a tool call",
			events: []string{contentEvent("s", "let me look"), deltaEvent("s", toolDelta), finishEvent("s", "tool_calls"), doneEvent},
			chunks: 2, ttfcChunk: 0,
		},
		{
			name:   "empty tool_calls and empty texts are no output",
			events: []string{deltaEvent("s", `{"tool_calls":[],"content":"","reasoning_content":""}`), contentEvent("s", "a"), finishEvent("s", "stop"), doneEvent},
			chunks: 1, ttfcChunk: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			if len(rec.Chunks) != tt.chunks {
				t.Fatalf("%d chunks, want %d", len(rec.Chunks), tt.chunks)
			}
			ttft, _ := rec.TTFT()
			if rec.FirstToken != rec.Chunks[0].At || ttft != rec.FirstToken-rec.SentOnWire() {
				t.Errorf("first token %v, TTFT %v: want the first output chunk %v", rec.FirstToken, ttft, rec.Chunks[0].At)
			}
			ttfc, ok := rec.TTFC()
			switch {
			case tt.ttfcChunk < 0 && (ok || rec.FirstContent != 0):
				t.Errorf("TTFC %v (first content %v) without content", ttfc, rec.FirstContent)
			case tt.ttfcChunk >= 0 && (!ok || rec.FirstContent != rec.Chunks[tt.ttfcChunk].At || ttfc != rec.FirstContent-rec.SentOnWire()):
				t.Errorf("first content %v (TTFC %v, %v), want chunk %d's time %v", rec.FirstContent, ttfc, ok, tt.ttfcChunk, rec.Chunks[tt.ttfcChunk].At)
			}
			if rec.ReasoningTokens != tt.reasoning {
				t.Errorf("ReasoningTokens = %d, want %d", rec.ReasoningTokens, tt.reasoning)
			}
			if got := rec.ITLs(nil); len(got) != tt.chunks-1 {
				t.Errorf("%d ITLs, want one per chunk after the first: %d", len(got), tt.chunks-1)
			}
		})
	}
}

func TestDoStreamEndings(t *testing.T) {
	t.Parallel()
	const id = "s"
	good := []string{roleEvent(id), contentEvent(id, "a"), contentEvent(id, "b")}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		class   ErrorClass
		noDone  bool
		errHas  string
		output  int
		source  TokenSource
	}{
		{
			name:    "finish_reason and usage, then closed without [DONE]",
			handler: streamOf(append(good, finishEvent(id, "stop"), usageEvent(id, 5, 2, 0))...),
			noDone:  true, output: 2, source: TokensFromUsage,
		},
		{
			name:    "finish_reason on the last content chunk, closed without [DONE]",
			handler: streamOf(good[0], good[1], `data: {"id":"s","choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}`+"\n\n"),
			noDone:  true, output: 2, source: TokensFromChunks,
		},
		{
			name:    "[DONE] without a newline",
			handler: streamOf(append(good, finishEvent(id, "stop"), "data: [DONE]")...),
			output:  2, source: TokensFromChunks,
		},
		{
			name:    "last chunk without a newline, no [DONE]",
			handler: streamOf(append(good, strings.TrimSuffix(finishEvent(id, "stop"), "\n\n"))...),
			noDone:  true, output: 2, source: TokensFromChunks,
		},
		{
			name:    "finish_reason, then the usage chunk cut mid-line",
			handler: streamOf(append(good, finishEvent(id, "stop"), `data: {"id":"s","choices":[],"usage":{"prompt_`)...),
			noDone:  true, output: 2, source: TokensFromChunks,
		},
		{
			name: "finish_reason, then the connection dropped",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, append(good, finishEvent(id, "stop"))...)
				panic(http.ErrAbortHandler)
			},
			class: ErrStreamBroken, errHas: "after 2 output chunks", output: 2, source: TokensFromChunks,
		},
		{
			name:    "closed before any finish_reason",
			handler: streamOf(good...),
			class:   ErrStreamBroken, errHas: "without [DONE] or a finish_reason", output: 2, source: TokensFromChunks,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, tt.class)
			checkTimeline(t, rec)
			if rec.NoDone != tt.noDone || !strings.Contains(rec.Error, tt.errHas) {
				t.Errorf("NoDone %v, error %q; want %v, an error holding %q", rec.NoDone, rec.Error, tt.noDone, tt.errHas)
			}
			if rec.OutputTokens != tt.output || rec.TokenSource != tt.source || len(rec.Chunks) != 2 {
				t.Errorf("%d tokens from %q, %d chunks; want %d from %q, 2 chunks", rec.OutputTokens, rec.TokenSource, len(rec.Chunks), tt.output, tt.source)
			}
		})
	}
}

func TestDoErrorEvents(t *testing.T) {
	t.Parallel()
	const msg = "the prompt is 9000 tokens, over the context of 8192"
	errObj := `{"error":{"message":"` + msg + `","type":"invalid_request_error","code":400}}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		chunks  int
		errHas  []string
	}{
		{
			name:    "comments then an error event",
			handler: streamOf(": ping\n\n", ": ping\n\n", "data: "+errObj+"\n\n"),
			errHas:  []string{"error event after 0 output chunks", msg, "type invalid_request_error", "code 400"},
		},
		{
			name:    "event lines and a comment, then an error event after content",
			handler: streamOf(roleEvent("s"), contentEvent("s", "a"), ": ping\n\n", "event: error\ndata: "+errObj+"\n\n", doneEvent),
			chunks:  1, errHas: []string{"after 1 output chunks", msg},
		},
		{
			name:    "an error event that is a string (TGI)",
			handler: streamOf(contentEvent("s", "a"), `data: {"error":"`+msg+`","error_type":"validation"}`+"\n\n"),
			chunks:  1, errHas: []string{msg},
		},
		{
			name:    "an error event with spaces and no newline at the end",
			handler: streamOf(": ping\n\n", `data:  { "error" : { "message" : "`+msg+`" } }`),
			errHas:  []string{msg},
		},
		{
			name: "a 200 answer that is a JSON error, not a stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(errObj))
			},
			errHas: []string{msg},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrStreamBroken)
			checkTimeline(t, rec)
			if len(rec.Chunks) != tt.chunks {
				t.Errorf("%d chunks kept, want %d", len(rec.Chunks), tt.chunks)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(rec.Error, s) {
					t.Errorf("Error %q does not hold %q", rec.Error, s)
				}
			}
		})
	}
}

func TestDoTokensPerChunk(t *testing.T) {
	t.Parallel()
	running := func(text string, completion int) string {
		return fmt.Sprintf(`data: {"id":"s","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`+"\n\n", text, completion)
	}
	chunks := func(n int) []string {
		var ev []string
		for i := range n {
			ev = append(ev, contentEvent("s", fmt.Sprint(i)))
		}
		return ev
	}
	tests := []struct {
		name   string
		events []string
		tokens []int32
		source ChunkTokenSource
		output int
	}{
		{
			name:   "running usage on every chunk: its growth",
			events: []string{running("a", 2), running("b", 5), running("c", 6), finishEvent("s", "stop"), usageEvent("s", 4, 6, 0), doneEvent},
			tokens: []int32{2, 3, 1}, source: ChunkTokensUsageGrowth, output: 6,
		},
		{
			name:   "only a final usage: spread over the chunks",
			events: append(chunks(3), finishEvent("s", "length"), usageEvent("s", 4, 7, 0), doneEvent),
			tokens: []int32{1, 3, 3}, source: ChunkTokensUsageTotal, output: 7,
		},
		{
			name:   "one chunk carrying a final usage of several tokens",
			events: append(chunks(1), finishEvent("s", "length"), usageEvent("s", 4, 3, 0), doneEvent),
			tokens: []int32{3}, source: ChunkTokensUsageTotal, output: 3,
		},
		{
			name:   "a final usage equal to the chunks",
			events: append(chunks(4), finishEvent("s", "length"), usageEvent("s", 4, 4, 0), doneEvent),
			tokens: []int32{1, 1, 1, 1}, source: ChunkTokensUsageTotal, output: 4,
		},
		{
			name:   "a final usage below the chunks: one token each",
			events: append(chunks(4), finishEvent("s", "length"), usageEvent("s", 4, 3, 0), doneEvent),
			tokens: []int32{1, 1, 1, 1}, source: ChunkTokensChunks, output: 3,
		},
		{
			name:   "running usage that stops: the final total is spread",
			events: []string{running("a", 3), contentEvent("s", "b"), finishEvent("s", "stop"), usageEvent("s", 4, 4, 0), doneEvent},
			tokens: []int32{1, 3}, source: ChunkTokensUsageTotal, output: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrNone)
			var tokens []int32
			sum := 0
			for _, ch := range rec.Chunks {
				tokens = append(tokens, ch.Tokens)
				sum += int(ch.Tokens)
			}
			if d := cmp.Diff(tt.tokens, tokens); d != "" {
				t.Errorf("chunk tokens (-want +got):\n%s", d)
			}
			if rec.TokensPerChunkSource != tt.source || rec.OutputTokens != tt.output {
				t.Errorf("source %q, output %d; want %q, %d", rec.TokensPerChunkSource, rec.OutputTokens, tt.source, tt.output)
			}
			if got, ok := rec.TokensPerChunk(); !ok || got != float64(sum)/float64(len(tt.tokens)) {
				t.Errorf("TokensPerChunk = %v, %v", got, ok)
			}
			if itls := rec.ITLs(nil); len(itls) != sum-int(tokens[0]) {
				t.Errorf("%d ITLs, want one per token after the first chunk's: %d", len(itls), sum-int(tokens[0]))
			}
		})
	}
}

func TestRecordITLsPerToken(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name   string
		chunks []Chunk
		want   []time.Duration
	}{
		{"one token per chunk: the gaps", []Chunk{{At: 10 * ms, Tokens: 1}, {At: 14 * ms, Tokens: 1}, {At: 20 * ms, Tokens: 1}}, []time.Duration{4 * ms, 6 * ms}},
		{"old records: tokens 0 means 1", []Chunk{{At: 10 * ms}, {At: 14 * ms}}, []time.Duration{4 * ms}},
		{"a chunk of 3 after 30 ms: three of 10 ms", []Chunk{{At: 10 * ms, Tokens: 2}, {At: 40 * ms, Tokens: 3}, {At: 45 * ms, Tokens: 1}},
			[]time.Duration{10 * ms, 10 * ms, 10 * ms, 5 * ms}},
		{"one chunk: none", []Chunk{{At: 10 * ms, Tokens: 4}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Record{Chunks: tt.chunks}
			if d := cmp.Diff(tt.want, r.ITLs(nil)); d != "" {
				t.Errorf("ITLs (-want +got):\n%s", d)
			}
		})
	}
	// TPOT does not depend on how tokens sit in chunks.
	r := Record{Sent: 1 * ms, FirstToken: 10 * ms, End: 46 * ms, OutputTokens: 7, Chunks: []Chunk{{At: 10 * ms, Tokens: 7}}}
	if tpot, ok := r.TPOT(); !ok || tpot != 6*ms {
		t.Errorf("TPOT = %v, %v; want 6ms", tpot, ok)
	}
	if _, ok := (&Record{}).TokensPerChunk(); ok {
		t.Error("TokensPerChunk without chunks")
	}
}
