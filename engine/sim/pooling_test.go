package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
)

// postJSON posts body to url and returns the status and the answer.
func postJSON(t *testing.T, url string, hdr map[string]string, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestPoolingServed: the built-in engine answers embeddings and both
// reranks with ground truth, one engine request per input as vLLM counts
// them: request_success_total{stop} and prompt_tokens_total grow by the
// inputs, generation_tokens_total not at all.
func TestPoolingServed(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Model: "m"})
	root := strings.TrimSuffix(ep.BaseURL, "/v1")
	m0 := scrape(t, ep.MetricsURL)

	// Embeddings: three inputs of 2, 3 and 1 words, vectors of 8.
	status, b := postJSON(t, ep.BaseURL+"/embeddings", map[string]string{"X-Request-Id": "emb-1"},
		`{"model":"m","input":["a b","c d e","f"],"encoding_format":"float","dimensions":8}`)
	if status != http.StatusOK {
		t.Fatalf("embeddings: %d %s", status, b)
	}
	var emb struct {
		ID   string `json:"id"`
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &emb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if emb.ID != "embd-emb-1" || len(emb.Data) != 3 {
		t.Errorf("embeddings answer %s", b)
	}
	var usage struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(b, &usage)
	if usage.Usage.PromptTokens != 6 {
		t.Errorf("usage.prompt_tokens = %d, want 6", usage.Usage.PromptTokens)
	}
	for i, d := range emb.Data {
		var norm float64
		for _, x := range d.Embedding {
			norm += x * x
		}
		if d.Index != i || len(d.Embedding) != 8 || math.Abs(norm-1) > 1e-5 {
			t.Errorf("vector %d: index %d, %d dimensions, norm² %g", i, d.Index, len(d.Embedding), norm)
		}
	}
	// base64: the same vector's float32s.
	_, b64 := postJSON(t, ep.BaseURL+"/embeddings", nil, `{"input":"a b","encoding_format":"base64","dimensions":8}`)
	var enc struct {
		Data []struct{ Embedding string } `json:"data"`
	}
	if err := json.Unmarshal(b64, &enc); err != nil || len(enc.Data) != 1 {
		t.Fatalf("base64 answer %s: %v", b64, err)
	}
	if raw, err := base64.StdEncoding.DecodeString(enc.Data[0].Embedding); err != nil || len(raw) != 32 {
		t.Errorf("base64 vector: %d bytes, %v", len(raw), err)
	}

	// vLLM's rerank: 4 documents, top_n 2; TEI's: the same, a bare array.
	status, b = postJSON(t, ep.BaseURL+"/rerank", nil, `{"model":"m","query":"q r","documents":["a","b c","d","e f g"],"top_n":2}`)
	var rr struct {
		Results []struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
			Document       struct{ Text string }
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rr); status != http.StatusOK || err != nil || len(rr.Results) != 2 || rr.Results[0].RelevanceScore < rr.Results[1].RelevanceScore {
		t.Fatalf("rerank: %d %s (%v)", status, b, err)
	}
	status, tb := postJSON(t, root+"/rerank", nil, `{"query":"q r","texts":["a","b c","d","e f g"],"return_text":true}`)
	var ranks []struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
		Text  string  `json:"text"`
	}
	if err := json.Unmarshal(tb, &ranks); status != http.StatusOK || err != nil || len(ranks) != 4 || ranks[0].Index != rr.Results[0].Index || ranks[0].Text == "" {
		t.Fatalf("TEI rerank: %d %s (%v)", status, tb, err)
	}

	m1 := scrape(t, ep.MetricsURL)
	// Engine requests: 3 + 1 + 4 + 4 inputs; prompt tokens: 6 + 2 + (4×2 + 1+2+1+3) × 2.
	if d := value(t, m1, "vllm:request_success_total") - value(t, m0, "vllm:request_success_total"); d != 12 {
		t.Errorf("request_success_total grew by %v, want 12 (one per input)", d)
	}
	if d := value(t, m1, "vllm:prompt_tokens_total") - value(t, m0, "vllm:prompt_tokens_total"); d != 6+2+15*2 {
		t.Errorf("prompt_tokens_total grew by %v, want %d", d, 6+2+15*2)
	}
	if d := value(t, m1, "vllm:generation_tokens_total") - value(t, m0, "vllm:generation_tokens_total"); d != 0 {
		t.Errorf("generation_tokens_total grew by %v, want 0", d)
	}
	for _, m := range m1["vllm:request_success_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "finished_reason" && l.GetValue() != "stop" && m.GetCounter().GetValue() > 0 {
				t.Errorf("a pooling request finished with %s", l.GetValue())
			}
		}
	}

	truth := e.Truth()
	want := []struct {
		endpoint                string
		inputs, results, tokens int
	}{{"/v1/embeddings", 3, 3, 6}, {"/v1/embeddings", 1, 1, 2}, {"/v1/rerank", 4, 2, 15}, {"/rerank", 4, 4, 15}}
	if len(truth) != len(want) {
		t.Fatalf("truth holds %d requests, want %d", len(truth), len(want))
	}
	for i, w := range want {
		tr := truth[i]
		if tr.Endpoint != w.endpoint || tr.Inputs != w.inputs || tr.Results != w.results || tr.PromptTokens != w.tokens ||
			tr.Outcome != OutcomeOK || tr.Status != 200 || tr.OutputTokens != 0 || tr.FirstTokenFlushed != 0 ||
			tr.PrefillEnd < tr.PrefillStart || tr.Finish < tr.PrefillEnd {
			t.Errorf("truth %d: %+v, want %+v", i, tr, w)
		}
	}
}

// TestPoolingRefused: what the engine answers 400 to, with its reason.
func TestPoolingRefused(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Dialect: DialectSGLang, Model: "m"})
	for _, c := range []struct{ path, body, want string }{
		{"/embeddings", `{"input":[]}`, "non-empty array"},
		{"/embeddings", `{"input":[[1,2]]}`, "not token ids"},
		{"/embeddings", `{"input":["a",""]}`, "input 1 is empty"},
		{"/embeddings", `{"input":"a","dimensions":0}`, "dimensions 0"},
		{"/embeddings", `{"input":"a","encoding_format":"int8"}`, "encoding_format"},
		{"/embeddings", `{"input":"` + strings.Repeat("w ", 5000) + `"}`, "maximum context length"},
		{"/rerank", `{"documents":["a"]}`, "query"},
		{"/rerank", `{"query":"q","texts":["a"]}`, "documents"},
		{"/rerank", `{"query":"q","documents":["a"],"top_n":-1}`, "top_n"},
	} {
		status, b := postJSON(t, ep.BaseURL+c.path, nil, c.body)
		if status != http.StatusBadRequest || !bytes.Contains(b, []byte(c.want)) {
			t.Errorf("%s %.60s: %d %s, want 400 with %q", c.path, c.body, status, b, c.want)
		}
	}
}

// FuzzPoolingRequest: the engine's reading of a pooling body never panics,
// and what it accepts has texts to embed or rank.
func FuzzPoolingRequest(f *testing.F) {
	for _, s := range []string{`{"input":["a","b"]}`, `{"input":"x"}`, `{"query":"q","documents":["a"],"top_n":1}`,
		`{"query":"q","texts":["a"]}`, `{"input":null}`, `[]`, `{"dimensions":-1,"input":"a"}`} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		name := []string{endpoints.Embeddings, endpoints.Rerank, endpoints.TEIRerank}[int(which)%3]
		ep, _ := endpoints.Lookup(name)
		req, err := parsePooling([]byte(body), ep)
		if err == nil && (len(req.texts) == 0 || (ep.Kind == endpoints.KindRerank && req.Query == nil)) {
			t.Fatalf("%q accepted as %+v", body, req)
		}
	})
}
