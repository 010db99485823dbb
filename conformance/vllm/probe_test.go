package vllm

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

// client bounds every probe: the tiny model answers in well under a second,
// a stream of 500 tokens on a loaded 2-core machine in a few.
var client = &http.Client{Timeout: 2 * time.Minute}

// post sends body as JSON to path and returns the response (body unread).
func post(t *testing.T, c *http.Client, tg target, path string, body any, hdr ...string) *http.Response {
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
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: POST %s: %v", tg.name, path, err)
	}
	return resp
}

// postJSON posts and decodes a JSON answer, returning its status too.
func postJSON(t *testing.T, tg target, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	resp := post(t, client, tg, path, body, hdr...)
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

// sse is one streamed response: its events in order and whether [DONE] ended it.
type sse struct {
	events []map[string]any
	done   bool
	header http.Header
}

// readSSE reads a stream to its end; each event's data must be JSON or [DONE].
func readSSE(t *testing.T, tg target, resp *http.Response) sse {
	t.Helper()
	defer resp.Body.Close()
	return readEvents(t, tg, bufio.NewReader(resp.Body), resp.Header)
}

// readEvents is readSSE from where r stands, at the start of a line.
func readEvents(t *testing.T, tg target, r *bufio.Reader, header http.Header) sse {
	t.Helper()
	out := sse{header: header}
	sc := bufio.NewScanner(r)
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
			if out.done {
				t.Errorf("%s: [DONE] twice", tg.name)
			}
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

// chat is a chat request of one user message.
func chat(tg target, content string, maxTokens int, extra map[string]any) map[string]any {
	body := map[string]any{
		"model":      tg.model,
		"messages":   []map[string]any{{"role": "user", "content": content}},
		"max_tokens": maxTokens,
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// families reads the target's /metrics, keyed by family name.
func families(t *testing.T, tg target) map[string]*dto.MetricFamily {
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
	out := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value is the sum of a counter's or gauge's series in fams whose labels
// include match (name and value pairs).
func value(fams map[string]*dto.MetricFamily, name string, match ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		if !hasLabels(m, match) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == match[i] && l.GetValue() == match[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
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
