package llamacpp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmbench-org/llmbench/scrape"
)

// client bounds every probe: the tiny model writes a token in about a
// millisecond; a few hundred on a loaded 2-core machine take seconds. It
// opens a connection per request: llama-server closes one after every
// streamed response, and a POST sent on it would meet the close
// (TestConnections holds both engines to that).
var client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}

// post sends body as JSON to path and returns the response (body unread).
func post(t *testing.T, tg target, path string, body any, hdr ...string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, tg.root+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: POST %s: %v", tg.name, path, err)
	}
	return resp
}

// postJSON posts and decodes a JSON answer, returning its status too.
func postJSON(t *testing.T, tg target, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	resp := post(t, tg, path, body, hdr...)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %s answered %d with non-JSON %q", tg.name, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// sse is one streamed response: its events in order, whether [DONE] ended
// it, and its headers.
type sse struct {
	events []map[string]any
	done   bool
	header http.Header
}

// readSSE reads a stream to its end; each event's data must be JSON or [DONE].
func readSSE(t *testing.T, tg target, resp *http.Response) sse {
	t.Helper()
	defer resp.Body.Close()
	out := sse{header: resp.Header}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line != "" && !strings.HasPrefix(line, ":") {
				t.Errorf("%s: stream line %q is neither data, a comment nor blank", tg.name, line)
			}
			continue
		}
		if data == "[DONE]" {
			out.done = true
			continue
		}
		if out.done {
			t.Errorf("%s: an event after [DONE]: %s", tg.name, data)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: event %q: %v", tg.name, data, err)
		}
		out.events = append(out.events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: reading the stream: %v", tg.name, err)
	}
	return out
}

// stream posts a streamed request and reads it whole.
func stream(t *testing.T, tg target, path string, body map[string]any, hdr ...string) sse {
	t.Helper()
	body["stream"] = true
	resp := post(t, tg, path, body, hdr...)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: %s answered %d: %s", tg.name, path, resp.StatusCode, raw)
	}
	return readSSE(t, tg, resp)
}

// chat is a chat request of one user message whose output cannot be invalid
// UTF-8 (the byte tokens are banned).
func chat(tg target, content string, maxTokens int) map[string]any {
	return map[string]any{
		"model":      tg.model,
		"messages":   []map[string]any{{"role": "user", "content": content}},
		"max_tokens": maxTokens,
		"logit_bias": noBytes(),
	}
}

// words is n common English words, each one token mid-sentence in the
// Llama vocabulary (not every word is: "fox" and "jumps" are two) and one
// word for the built-in tokenizer.
func words(n int) string {
	list := strings.Fields("the of and to in is that for it with as was on be at by")
	out := make([]string, n)
	for i := range out {
		out[i] = list[i%len(list)]
	}
	return strings.Join(out, " ")
}

// family is one metric family as /metrics wrote it.
type family struct {
	typ, help string
	value     float64
}

// families reads the target's /metrics, keyed by family name; each value
// is the sum of the family's series.
func families(t *testing.T, tg target) map[string]family {
	t.Helper()
	resp, err := client.Get(tg.root + "/metrics")
	if err != nil {
		t.Fatalf("%s: /metrics: %v", tg.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := scrape.Parse(body, resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("%s: /metrics: %v", tg.name, err)
	}
	out := make(map[string]family, len(fams))
	for _, f := range fams {
		out[f.GetName()] = family{typ: strings.ToLower(f.GetType().String()), help: f.GetHelp(), value: sum(f)}
	}
	return out
}

func sum(f *dto.MetricFamily) float64 {
	v := 0.0
	for _, m := range f.GetMetric() {
		switch {
		case m.GetCounter() != nil:
			v += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			v += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			v += m.GetUntyped().GetValue()
		}
	}
	return v
}

// num reads a JSON number at a path of object keys.
func num(v any, keys ...string) (float64, bool) {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[k]
	}
	f, ok := v.(float64)
	return f, ok
}

// choice0 is an event's first choice (nil when it has none).
func choice0(ev map[string]any) map[string]any {
	cs, _ := ev["choices"].([]any)
	if len(cs) == 0 {
		return nil
	}
	c, _ := cs[0].(map[string]any)
	return c
}
