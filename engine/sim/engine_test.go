package sim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStreamChunkSequence(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Model: "m1"})
	start := time.Now()
	clock := func() time.Duration { return time.Since(start) }
	body := chatBody(map[string]any{
		"model":          "m1",
		"messages":       []map[string]any{{"role": "system", "content": "be brief"}, {"role": "user", "content": words("w", 30)}},
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     12,
		"rid":            "req-1",
	})
	res := postStream(t, newClient(), ep.BaseURL+"/chat/completions", clock, map[string]string{"X-Request-Id": "req-1"}, body)
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if !res.done {
		t.Fatal("no [DONE]")
	}
	// role, 12 content chunks, finish, usage.
	if got, want := len(res.chunks), 1+12+1+1; got != want {
		t.Fatalf("got %d chunks, want %d", got, want)
	}
	for i, c := range res.chunks {
		if c.ID != "req-1" {
			t.Errorf("chunk %d id %q, want the rid verbatim", i, c.ID)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %d object %q", i, c.Object)
		}
	}
	if d := res.chunks[0].Choices[0].Delta; d.Role != "assistant" || d.Content != "" {
		t.Errorf("first chunk delta = %+v, want role only", d)
	}
	var text strings.Builder
	for i, c := range res.chunks[1:13] {
		content := c.Choices[0].Delta.Content
		if len(strings.Fields(content)) != 1 || !strings.HasPrefix(content, " ") {
			t.Errorf("content chunk %d = %q, want one word with a leading space", i, content)
		}
		if c.Choices[0].FinishReason != nil {
			t.Errorf("content chunk %d has finish_reason %q", i, *c.Choices[0].FinishReason)
		}
		text.WriteString(content)
	}
	fin := res.chunks[13]
	if fr := fin.Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("finish chunk finish_reason = %v, want length", fr)
	}
	u := res.chunks[14]
	if u.Choices == nil || len(u.Choices) != 0 || u.Usage == nil {
		t.Fatalf("usage chunk = %+v, want empty choices and usage", u)
	}
	if u.Usage.PromptTokens != 32 || u.Usage.CompletionTokens != 12 || u.Usage.TotalTokens != 44 {
		t.Errorf("usage = %+v, want 32 prompt (2+30 words), 12 completion", *u.Usage)
	}

	truth := e.Truth()
	if len(truth) != 1 {
		t.Fatalf("got %d truth records, want 1", len(truth))
	}
	tr := truth[0]
	if tr.ID != "req-1" || tr.ChunkID != "req-1" || tr.HeaderID != "req-1" {
		t.Errorf("truth ids = %q/%q/%q", tr.ID, tr.ChunkID, tr.HeaderID)
	}
	if tr.Outcome != OutcomeOK || tr.Status != 200 || tr.FinishReason != "length" {
		t.Errorf("truth outcome %q status %d finish %q", tr.Outcome, tr.Status, tr.FinishReason)
	}
	if tr.PromptTokens != 32 || tr.OutputTokens != 12 || len(tr.TokenFlushes) != 12 {
		t.Errorf("truth tokens prompt %d output %d flushes %d", tr.PromptTokens, tr.OutputTokens, len(tr.TokenFlushes))
	}
	order := []time.Duration{tr.Arrival, tr.QueueEnter, tr.QueueLeave, tr.PrefillStart, tr.PrefillEnd, tr.FirstTokenFlushed}
	if !slices.IsSorted(order) || tr.Arrival <= 0 {
		t.Errorf("truth times out of order: %v", order)
	}
	if tr.FirstTokenFlushed != tr.TokenFlushes[0] || !slices.IsSorted(tr.TokenFlushes) || tr.Finish < tr.TokenFlushes[11] {
		t.Errorf("token flushes %v, finish %v", tr.TokenFlushes, tr.Finish)
	}
	// The client sent before the handler started and read after the flush,
	// so its TTFT cannot be much shorter than the truth's. (No upper bound:
	// the machine may be loaded; the harness's e2e test holds the 2 ms one.)
	clientTTFT := res.firstTok - res.sent
	truthTTFT := tr.FirstTokenFlushed - tr.Arrival
	if clientTTFT+5*time.Millisecond < truthTTFT {
		t.Errorf("client TTFT %v shorter than truth %v", clientTTFT, truthTTFT)
	}
	t.Logf("client TTFT %v, truth %v", clientTTFT, truthTTFT)

	fams := scrape(t, ep.MetricsURL)
	for name, want := range map[string]float64{
		"sglang:prompt_tokens_total":     32,
		"sglang:generation_tokens_total": 12,
		"sglang:num_requests_total":      1,
	} {
		if got := value(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if n, _ := histCount(t, fams, "sglang:time_to_first_token_seconds"); n != 1 {
		t.Errorf("TTFT count %d, want 1", n)
	}
	if n, sum := histCount(t, fams, "sglang:inter_token_latency_seconds"); n != 11 || sum <= 0 {
		t.Errorf("ITL count %d sum %v, want 11 tokens after the first", n, sum)
	}
	if n, _ := histCount(t, fams, "sglang:e2e_request_latency_seconds"); n != 1 {
		t.Errorf("e2e count %d, want 1", n)
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{})
	body := chatBody(map[string]any{
		"messages":              []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "one two"}, {"type": "text", "text": "three"}}}},
		"max_completion_tokens": 5,
		"rid":                   "whole-1",
	})
	resp, err := newClient().Post(ep.BaseURL+"/chat/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "whole-1" || got.Object != "chat.completion" || len(got.Choices) != 1 {
		t.Fatalf("response = %+v", got)
	}
	c := got.Choices[0]
	if c.Message.Role != "assistant" || len(strings.Fields(c.Message.Content)) != 5 || c.FinishReason != "length" {
		t.Errorf("choice = %+v", c)
	}
	if got.Usage.PromptTokens != 3 || got.Usage.CompletionTokens != 5 {
		t.Errorf("usage = %+v", got.Usage)
	}
	tr := e.Truth()
	if len(tr) != 1 || tr[0].Stream || tr[0].OutputTokens != 5 || len(tr[0].TokenFlushes) != 5 {
		t.Errorf("truth = %+v", tr)
	}
}

func TestErrorsAreOpenAIShaped(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{})
	client := newClient()
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"bad json", http.MethodPost, "/v1/chat/completions", "{", 400},
		{"no messages", http.MethodPost, "/v1/chat/completions", `{"messages":[]}`, 400},
		{"empty prompt", http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"  "}]}`, 400},
		{"n=2", http.MethodPost, "/v1/chat/completions", `{"n":2,"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"max_tokens 0", http.MethodPost, "/v1/chat/completions", `{"max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"image part", http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400},
		{"too long", http.MethodPost, "/v1/chat/completions", string(chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": words("x", 5000)}}})), 400},
		{"GET chat", http.MethodGet, "/v1/chat/completions", "", 405},
		{"unknown route", http.MethodGet, "/v1/nope", "", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, strings.TrimSuffix(ep.BaseURL, "/v1")+tc.path, strings.NewReader(tc.body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			var body apiError
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("error body: %v", err)
			}
			if body.Error.Message == "" || body.Error.Type == "" || body.Error.Code != tc.status {
				t.Errorf("error body = %+v", body)
			}
		})
	}
	t.Cleanup(func() {
		for _, tr := range e.Truth() {
			if tr.Outcome != OutcomeRejected || tr.Status < 400 {
				t.Errorf("rejected request recorded as %+v", tr)
			}
		}
	})
}

func TestModelsAndHealth(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Model: "served-name"})
	resp, err := http.Get(ep.BaseURL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("served-name", models.Data[0].ID); diff != "" || models.Object != "list" {
		t.Errorf("models = %+v", models)
	}
	resp, err = http.Get(strings.TrimSuffix(ep.BaseURL, "/v1") + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health status %d", resp.StatusCode)
	}
}
