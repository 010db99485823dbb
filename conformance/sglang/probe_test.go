package sglang

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmbench-org/llmbench/scrape"
)

// chat posts one chat request of one user message and returns the response.
func chat(t *testing.T, tg target, maxTokens int, extra map[string]any) *http.Response {
	t.Helper()
	body := map[string]any{
		"model":      tg.model,
		"messages":   []map[string]any{{"role": "user", "content": "hello world"}},
		"max_tokens": maxTokens,
	}
	for k, v := range extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(tg.root+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", tg.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: status %d: %s", tg.name, resp.StatusCode, msg)
	}
	return resp
}

// events reads a stream to its end: its JSON events in order; it fails
// unless [DONE] ends it.
func events(t *testing.T, tg target, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if done {
			t.Errorf("%s: an event after [DONE]: %s", tg.name, data)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: event %q: %v", tg.name, data, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: reading the stream: %v", tg.name, err)
	}
	if !done {
		t.Errorf("%s: the stream did not end with [DONE]", tg.name)
	}
	return out
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

// keys lists a JSON object's keys, sorted ("-" for a value that is not an object).
func keys(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "-"
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
