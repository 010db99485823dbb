package client

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/race"
)

// streamServer answers every chat request with the events.
func streamServer(t *testing.T, events ...string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, events...)
	}))
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL, nil)
}

// usageJSON is a usage event with raw members.
func usageJSON(members string) string {
	return `data: {"id":"u","choices":[],"usage":{` + members + `}}` + "\n\n"
}

// withUsage is a content chunk carrying a running usage.
func withUsage(text string, completion string) string {
	return fmt.Sprintf(`data: {"id":"u","choices":[{"index":0,"delta":{"content":%q}}],"usage":{"prompt_tokens":5,"completion_tokens":%s}}`+"\n\n", text, completion)
}

func TestUsageClaims(t *testing.T) {
	content := []string{roleEvent("u"), contentEvent("u", "a"), contentEvent("u", "b"), contentEvent("u", "c"), finishEvent("u", "stop")}
	for _, tc := range []struct {
		name      string
		events    []string
		output    int
		prompt    int
		source    TokenSource
		perChunk  ChunkTokenSource
		violation []Violation
	}{
		{"a usage within the caps is used", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":6`), doneEvent),
			6, 7, TokensFromUsage, ChunkTokensUsageTotal, nil},
		{"10^18 completion tokens as an integer", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":1000000000000000000`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBeyondCap}},
		{"10^18 completion tokens as 1e18", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":1e18`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageInvalid}},
		{"more than an int64", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":99999999999999999999999`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageInvalid}},
		{"a fraction", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":2.5`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageInvalid}},
		{"a string", append(slices.Clone(content), usageJSON(`"prompt_tokens":"7","completion_tokens":3`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageInvalid}},
		{"minus zero is zero", append(slices.Clone(content), usageJSON(`"prompt_tokens":-0,"completion_tokens":3`), doneEvent),
			3, 0, TokensFromUsage, ChunkTokensUsageTotal, nil},
		{"negative completion tokens", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":-40`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageNegative}},
		{"negative cached tokens", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":-1}`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageNegative}},
		{"a prompt far beyond what was sent", append(slices.Clone(content), usageJSON(`"prompt_tokens":100000000,"completion_tokens":3`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBeyondCap}},
		{"more cached tokens than prompt tokens", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBeyondCap}},
		{"more reasoning tokens than completion tokens", append(slices.Clone(content), usageJSON(`"prompt_tokens":7,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":4}`), doneEvent),
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBeyondCap}},
		{"a running usage that grows", []string{roleEvent("u"), withUsage("a", "1"), withUsage("b", "3"), withUsage("c", "4"), finishEvent("u", "stop"), usageJSON(`"prompt_tokens":5,"completion_tokens":4`), doneEvent},
			4, 5, TokensFromUsage, ChunkTokensUsageGrowth, nil},
		{"a running usage that goes backwards", []string{roleEvent("u"), withUsage("a", "1"), withUsage("b", "3"), withUsage("c", "2"), finishEvent("u", "stop"), usageJSON(`"prompt_tokens":5,"completion_tokens":4`), doneEvent},
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBackwards}},
		{"a running usage that claims 10^18 at once", []string{roleEvent("u"), withUsage("a", "1"), withUsage("b", "1000000000000000000"), withUsage("c", "1000000000000000001"), finishEvent("u", "stop"), doneEvent},
			3, 0, TokensFromChunks, ChunkTokensChunks, []Violation{ViolationUsageBeyondCap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := streamServer(t, tc.events...).Do(t.Context(), request("u"))
			if !rec.OK() {
				t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
			}
			if rec.OutputTokens != tc.output || rec.PromptTokens != tc.prompt || rec.TokenSource != tc.source || rec.TokensPerChunkSource != tc.perChunk {
				t.Errorf("output %d prompt %d from %q, chunks %q; want %d, %d, %q, %q",
					rec.OutputTokens, rec.PromptTokens, rec.TokenSource, rec.TokensPerChunkSource, tc.output, tc.prompt, tc.source, tc.perChunk)
			}
			if !slices.Equal(rec.Violations, tc.violation) {
				t.Errorf("violations %q, want %q", rec.Violations, tc.violation)
			}
			// Whatever was claimed, the per-token figures are bounded by
			// the request: at most max_tokens × 4 + 64 ITLs.
			if n := len(rec.ITLs(nil)); n > rec.MaxTokens*completionCapFactor+completionCapSlack {
				t.Errorf("%d ITLs for max_tokens %d", n, rec.MaxTokens)
			}
			if tpot, ok := rec.TPOT(); ok && tpot < 0 {
				t.Errorf("negative TPOT %v", tpot)
			}
		})
	}
}

func TestUsageCaps(t *testing.T) {
	for _, tc := range []struct{ max, choices, body, completion, prompt int }{
		{16, 1, 100, 16*4 + 64, 100 + 8192},
		{16, 3, 0, 16*3*4 + 64, 8192},
		{0, 1, 10, 1 << 22, 8202},
		{0, 2, 10, 2 << 22, 8202},
		{1 << 30, 1, 10, 1 << 22, 8202},
	} {
		c, p := UsageCaps(tc.max, tc.choices, tc.body)
		if c != tc.completion || p != tc.prompt {
			t.Errorf("UsageCaps(%d, %d, %d) = %d, %d; want %d, %d", tc.max, tc.choices, tc.body, c, p, tc.completion, tc.prompt)
		}
	}
}

func TestChunksAfterFinish(t *testing.T) {
	rec := streamServer(t, roleEvent("f"), contentEvent("f", "a"), contentEvent("f", "b"), finishEvent("f", "stop"),
		contentEvent("f", "late"), contentEvent("f", "later"), usageEvent("f", 5, 2, 0), doneEvent).Do(t.Context(), request("f"))
	if !rec.OK() || len(rec.Chunks) != 2 || rec.OutputTokens != 2 || rec.FinishReason != "stop" {
		t.Fatalf("%q %q: %d chunks, %d tokens, finish %q; want success, the 2 chunks before the finish, 2 tokens",
			rec.ErrorClass, rec.Error, len(rec.Chunks), rec.OutputTokens, rec.FinishReason)
	}
	if !slices.Equal(rec.Violations, []Violation{ViolationChunkAfterFinish}) {
		t.Errorf("violations %q", rec.Violations)
	}
	// Content in the finish chunk itself is no violation.
	rec = streamServer(t, contentEvent("f", "a"),
		`data: {"id":"f","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`+"\n\n", doneEvent).Do(t.Context(), request("f"))
	if !rec.OK() || len(rec.Chunks) != 2 || rec.Violations != nil {
		t.Errorf("%q: %d chunks, violations %q: want 2 chunks and none", rec.ErrorClass, len(rec.Chunks), rec.Violations)
	}
}

func TestChoiceIndexNotAskedFor(t *testing.T) {
	two := `data: {"id":"i","choices":[{"index":1,"delta":{"content":"x"}}]}` + "\n\n"
	rec := streamServer(t, contentEvent("i", "a"), two, finishEvent("i", "stop"), doneEvent).Do(t.Context(), request("i"))
	if !rec.OK() || len(rec.Chunks) != 1 || !rec.HasViolation(ViolationChoiceIndex) || rec.Choices != 0 {
		t.Errorf("%q: %d chunks, violations %q, choices %d: want the index-1 chunk flagged and left out", rec.ErrorClass, len(rec.Chunks), rec.Violations, rec.Choices)
	}
}

func TestContentAsParts(t *testing.T) {
	part := func(text string) string {
		return fmt.Sprintf(`data: {"id":"p","choices":[{"index":0,"delta":{"content":[{"type":"text","text":%q}]}}]}`+"\n\n", text)
	}
	rec := streamServer(t, roleEvent("p"), part(""), part("a"), part("b"),
		`data: {"id":"p","choices":[{"index":0,"delta":{"reasoning_content":[{"type":"text","text":"r"}]}}]}`+"\n\n",
		finishEvent("p", "stop"), usageEvent("p", 3, 3, 0), doneEvent).Do(t.Context(), request("p"))
	if !rec.OK() || len(rec.Chunks) != 3 || rec.FirstContent == 0 || rec.FirstContent != rec.FirstToken {
		t.Errorf("%q %q: %d chunks, first content %v, first token %v: want the 2 parts chunks and the reasoning one, content first",
			rec.ErrorClass, rec.Error, len(rec.Chunks), rec.FirstContent, rec.FirstToken)
	}
	// A whole (non-streamed) response with parts.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":"p","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	rec = newTestClient(t, srv.URL, func(c *Config) { c.NoStream = true }).Do(t.Context(), request("p"))
	if !rec.OK() || rec.OutputTokens != 1 {
		t.Errorf("non-streamed parts: %q %q, %d tokens", rec.ErrorClass, rec.Error, rec.OutputTokens)
	}
}

// choiceEvent is a chunk of choice i.
func choiceEvent(i int, text, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`data: {"id":"n","choices":[{"index":%d,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n", i, text, f)
}

func TestTwoChoices(t *testing.T) {
	srv := func(events ...string) *Client {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeEvents(w, events...) }))
		t.Cleanup(s.Close)
		return newTestClient(t, s.URL, func(c *Config) { c.ExtraBody = map[string]any{"n": 2} })
	}
	// vLLM's shape: one chunk per choice per step, interleaved; and one
	// chunk carrying both choices.
	both := `data: {"id":"n","choices":[{"index":0,"delta":{"content":"c"}},{"index":1,"delta":{"content":"z"}}]}` + "\n\n"
	rec := srv(choiceEvent(0, "a", ""), choiceEvent(1, "x", ""), choiceEvent(0, "b", ""), choiceEvent(1, "y", ""), both,
		choiceEvent(0, "", "stop"), choiceEvent(1, "", "length"), usageEvent("n", 5, 6, 0), doneEvent).Do(t.Context(), request("n"))
	if !rec.OK() || rec.Choices != 2 || len(rec.Chunks) != 6 || rec.OutputTokens != 6 {
		t.Fatalf("%q %q: %d choices, %d chunks, %d tokens; want success, 2 choices, 6 chunks, 6 tokens", rec.ErrorClass, rec.Error, rec.Choices, len(rec.Chunks), rec.OutputTokens)
	}
	var per [2]int
	for _, ch := range rec.Chunks {
		per[ch.Choice]++
	}
	if per != [2]int{3, 3} || len(rec.ITLs(nil)) != 4 || rec.FirstToken != rec.Chunks[0].At {
		t.Errorf("chunks per choice %v, %d ITLs: want 3 and 3, and 4 ITLs (2 a choice)", per, len(rec.ITLs(nil)))
	}
	// A choice that never finished breaks the stream.
	rec = srv(choiceEvent(0, "a", ""), choiceEvent(1, "x", ""), choiceEvent(0, "", "stop"), doneEvent).Do(t.Context(), request("n"))
	if rec.OK() || !strings.Contains(rec.Error, "1 of its 2 choices") {
		t.Errorf("%q %q: want a broken stream naming the unfinished choice", rec.ErrorClass, rec.Error)
	}
	// Output of choice 1 after its own finish is flagged; choice 0 goes on.
	rec = srv(choiceEvent(0, "a", ""), choiceEvent(1, "x", "stop"), choiceEvent(1, "late", ""), choiceEvent(0, "b", "stop"), doneEvent).Do(t.Context(), request("n"))
	if !rec.OK() || len(rec.Chunks) != 3 || !rec.HasViolation(ViolationChunkAfterFinish) {
		t.Errorf("%q: %d chunks, violations %q: want 3 chunks and chunk_after_finish", rec.ErrorClass, len(rec.Chunks), rec.Violations)
	}
}

func TestExtraBodyN(t *testing.T) {
	for _, n := range []any{0, -1, 65, 1.5, "2"} {
		if _, err := New(Config{BaseURL: "http://e.test/v1", Model: "m", ExtraBody: map[string]any{"n": n}}); err == nil {
			t.Errorf("n = %v accepted", n)
		}
	}
	c, err := New(Config{BaseURL: "http://e.test/v1", Model: "m", ExtraBody: map[string]any{"n": 64, "max_completion_tokens": 9}})
	if err != nil || c.choices != 64 || c.extraMaxTokens != 9 {
		t.Errorf("n 64: %v, choices %d, max %d", err, c.choices, c.extraMaxTokens)
	}
}

func TestITLsPerChoice(t *testing.T) {
	ms := time.Millisecond
	r := Record{Choices: 2, Chunks: []Chunk{
		{At: 10 * ms, Tokens: 1}, {At: 11 * ms, Tokens: 1, Choice: 1},
		{At: 20 * ms, Tokens: 1}, {At: 21 * ms, Tokens: 2, Choice: 1},
		{At: 30 * ms, Tokens: 1}, {At: 41 * ms, Tokens: 1, Choice: 1},
	}}
	want := []time.Duration{10 * ms, 5 * ms, 5 * ms, 10 * ms, 20 * ms}
	if got := r.ITLs(nil); !slices.Equal(got, want) {
		t.Errorf("ITLs %v, want %v (per choice, never across)", got, want)
	}
	if m, ok := r.MeanITL(); !ok || m != (20*ms+30*ms)/5 {
		t.Errorf("MeanITL %v %v, want %v", m, ok, (20*ms+30*ms)/5)
	}
	r.OutputTokens = 10
	r.Sent, r.FirstToken, r.End = 0, 10*ms, 50*ms
	if tpot, ok := r.TPOT(); !ok || tpot != 10*ms {
		t.Errorf("TPOT %v, want 10ms: (E2E − TTFT) over the tokens of one choice less one", tpot)
	}
}

func TestSpreadTokensOverChoices(t *testing.T) {
	for _, tc := range []struct {
		choices []int32
		total   int
		want    []int32
	}{
		{[]int32{0}, 5, []int32{5}},
		{[]int32{0, 0, 0}, 7, []int32{1, 3, 3}},
		{[]int32{0, 1, 0, 1}, 6, []int32{1, 1, 2, 2}},
		{[]int32{0, 1, 1, 0, 1}, 9, []int32{1, 1, 2, 3, 2}},
		{[]int32{0, 1}, 4, []int32{3, 1}},
	} {
		chunks := make([]Chunk, len(tc.choices))
		for i, c := range tc.choices {
			chunks[i].Choice = c
		}
		spreadTokens(chunks, tc.total)
		got := make([]int32, len(chunks))
		sum := 0
		for i, ch := range chunks {
			got[i] = ch.Tokens
			sum += int(ch.Tokens)
		}
		if !slices.Equal(got, tc.want) || sum != tc.total {
			t.Errorf("spread %d over choices %v: %v, want %v", tc.total, tc.choices, got, tc.want)
		}
	}
}

// The per-chunk path stays free of allocations with parts arrays, two
// choices and violations (perchunk_test.go's rule, for issue 21's shapes).
func TestPerChunkPathAllocatesNothingForNewShapes(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race do not describe the product (perchunk_test.go)")
	}
	for _, s := range []struct {
		name   string
		n      int
		event  func(i int) string
		finish string
	}{
		{"content parts", 1, func(i int) string {
			return fmt.Sprintf(`data: {"id":"a","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"t%d"}]}}]}`+"\n\n", i)
		}, finishEvent("a", "length")},
		{"two choices interleaved", 2, func(i int) string { return choiceEvent(i%2, "t", "") }, choiceEvent(0, "", "stop") + choiceEvent(1, "", "stop")},
		{"two choices a chunk", 2, func(i int) string {
			return `data: {"id":"a","choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}` + "\n\n"
		}, choiceEvent(0, "", "stop") + choiceEvent(1, "", "stop")},
		{"chunks after the finish", 1, func(i int) string {
			if i == 0 {
				return contentEvent("a", "x") + finishEvent("a", "stop")
			}
			return contentEvent("a", "late")
		}, ""},
	} {
		t.Run(s.name, func(t *testing.T) {
			allocs := func(chunks int) float64 {
				var b strings.Builder
				for i := range chunks {
					b.WriteString(s.event(i))
				}
				b.WriteString(s.finish + usageEvent("a", 11, 2*chunks, 0) + doneEvent)
				c := newTestClient(t, "http://engine.test", func(cfg *Config) {
					cfg.HTTPClient = &http.Client{Transport: bodyTransport(b.String())}
					cfg.ExtraBody = map[string]any{"n": s.n}
				})
				r := request("alloc")
				r.MaxTokens = 1024
				var rec Record
				n := testing.AllocsPerRun(20, func() { rec = c.Do(t.Context(), r) })
				if !rec.OK() {
					t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
				}
				return n
			}
			short, long := allocs(16), allocs(1024)
			if long > short {
				t.Errorf("a request of 1024 chunks allocates %.0f times, one of 16 chunks %.0f: want no allocation per chunk", long, short)
			}
		})
	}
}
