package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sseEvent is one line of a stream: a data event or a comment.
type sseEvent struct {
	comment bool
	data    string
}

// rawPost sends a JSON body and returns the response (closed at the end of the test).
func rawPost(t *testing.T, client *http.Client, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readEvents reads a whole SSE body, line by line (blank lines dropped).
func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, ":"):
			out = append(out, sseEvent{comment: true, data: line})
		case strings.HasPrefix(line, "data: "):
			out = append(out, sseEvent{data: strings.TrimPrefix(line, "data: ")})
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	return out
}

// dataEvents drops comments and [DONE] and decodes the rest.
func dataEvents(t *testing.T, evs []sseEvent) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range evs {
		if ev.comment || ev.data == "[DONE]" {
			continue
		}
		out = append(out, decodeJSON(t, ev.data))
	}
	return out
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return m
}

// shape describes a JSON value's structure: object keys (sorted) with
// their shapes, an array by its first element, scalars by kind.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s:%s", k, shape(x[k]))
		}
		b.WriteString("}")
		return b.String()
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + shape(x[0]) + "]"
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// fixtureEvents reads the data events of a captured SSE file (its HTTP head
// skipped) and the head's headers.
func fixtureEvents(t *testing.T, path string) (http.Header, []map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{}
	if bytes.HasPrefix(raw, []byte("HTTP/")) {
		head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
		if !ok {
			head, body, _ = bytes.Cut(raw, []byte("\n\n"))
		}
		for _, line := range strings.Split(string(head), "\n")[1:] {
			k, v, _ := strings.Cut(line, ":")
			hdr.Add(k, strings.TrimSpace(v))
		}
		raw = body
	}
	return hdr, dataEvents(t, readEvents(t, bytes.NewReader(raw)))
}

// choice0 is the first choice of a chunk (nil when there is none).
func choice0(m map[string]any) map[string]any {
	cs, _ := m["choices"].([]any)
	if len(cs) == 0 {
		return nil
	}
	c, _ := cs[0].(map[string]any)
	return c
}

func deltaOf(m map[string]any) map[string]any {
	c := choice0(m)
	if c == nil {
		return nil
	}
	d, _ := c["delta"].(map[string]any)
	return d
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) float64 { f, _ := v.(float64); return f }

// usageOfChunk returns a chunk's usage object (nil when absent or null).
func usageOfChunk(m map[string]any) map[string]any {
	u, _ := m["usage"].(map[string]any)
	return u
}

func wordCount(s string) int { return len(strings.Fields(s)) }

func truthByID(t *testing.T, e *Engine, pred func(RequestTruth) bool) RequestTruth {
	t.Helper()
	truth := e.Truth()
	i := slices.IndexFunc(truth, pred)
	if i < 0 {
		t.Fatalf("no truth record matches among %d", len(truth))
	}
	return truth[i]
}
