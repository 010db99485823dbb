package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSGLangExportLines: the sglang dialect writes one line per request in
// the hour's file, each with SGLang's fields, its stamps the truth's
// (epoch + offset, Unix seconds), its durations in seconds, its rid in the
// id and in request_parameters.
func TestSGLangExportLines(t *testing.T) {
	dir := t.TempDir()
	e, ep := startEngineNoCleanup(t, Config{Dialect: DialectSGLang, SGLangExportDir: dir})
	for i, stream := range []bool{true, false} {
		body := chatBody(map[string]any{"model": ep.Model, "stream": stream, "max_tokens": 6, "rid": "rid-" + string(rune('a'+i)),
			"messages": []map[string]string{{"role": "user", "content": words("w", 30)}}})
		resp, err := http.Post(ep.BaseURL+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, rb)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "sglang-request-metrics-") {
		t.Fatalf("files %v, %v", entries, err)
	}
	if hour := time.Now().Format("20060102_15"); entries[0].Name() != "sglang-request-metrics-"+hour+".log" &&
		entries[0].Name() != "sglang-request-metrics-"+time.Now().Add(-time.Hour).Format("20060102_15")+".log" {
		t.Errorf("file %s, not this hour's (%s)", entries[0].Name(), hour)
	}
	b, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	truth := map[string]RequestTruth{}
	for _, tr := range e.Truth() {
		truth[tr.ID] = tr
	}
	if len(lines) != 2 || len(truth) != 2 {
		t.Fatalf("%d lines, %d requests", len(lines), len(truth))
	}
	wall := func(d time.Duration) float64 { return float64(e.Epoch().Add(d).UnixNano()) / 1e9 }
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		id, _ := m["id"].(string)
		tr, ok := truth[id]
		if !ok {
			t.Fatalf("line of an unknown request %q", id)
		}
		var params map[string]any
		if err := json.Unmarshal([]byte(m["request_parameters"].(string)), &params); err != nil || params["rid"] != id || params["stream"] != tr.Stream {
			t.Errorf("request_parameters %v (%v)", m["request_parameters"], err)
		}
		first := tr.Finish
		if tr.Stream {
			first = tr.FirstTokenFlushed
		}
		for k, want := range map[string]float64{
			"request_received_ts": wall(tr.Arrival), "api_server_dispatch_finish_ts": wall(tr.QueueEnter),
			"forward_entry_time": wall(tr.QueueLeave), "prefill_finished_time": wall(tr.PrefillEnd),
			"response_sent_to_client_ts": wall(first), "request_finished_ts": wall(tr.DecodeEnd),
			"queue_time": (tr.QueueLeave - tr.QueueEnter).Seconds(), "e2e_latency": (tr.DecodeEnd - tr.Arrival).Seconds(),
			"inference_time": (tr.DecodeEnd - tr.QueueLeave).Seconds(),
			"prompt_tokens":  float64(tr.PromptTokens), "completion_tokens": float64(tr.GeneratedTokens), "cached_tokens": float64(tr.CachedTokens),
		} {
			got, ok := m[k].(float64)
			if !ok || math.Abs(got-want) > 1e-6 {
				t.Errorf("%s: %s %v, truth %v", id, k, m[k], want)
			}
		}
		if fr, _ := m["finish_reason"].(map[string]any); fr["type"] != "length" || fr["length"] != float64(6) {
			t.Errorf("%s: finish_reason %v", id, m["finish_reason"])
		}
	}
}

// TestSGLangExportFlags: `llmbench serve` takes SGLang's two flags
// together, in the sglang dialect only.
func TestSGLangExportFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantDir string
		err     string
	}{
		{args: nil},
		{args: []string{"--export-metrics-to-file", "--export-metrics-to-file-dir", "/tmp/x"}, wantDir: "/tmp/x"},
		{args: []string{"--export-metrics-to-file"}, err: "needs --export-metrics-to-file-dir"},
		{args: []string{"--export-metrics-to-file-dir", "/tmp/x"}, err: "needs --export-metrics-to-file"},
		{args: []string{"--dialect", "vllm", "--export-metrics-to-file", "--export-metrics-to-file-dir", "/tmp/x"}, err: "needs --dialect sglang"},
	} {
		var o ServeOptions
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		o.Bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := o.Config()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.SGLangExportDir != tc.wantDir {
			t.Errorf("%q: dir %q, %v", tc.args, cfg.SGLangExportDir, err)
		}
	}
	if _, err := New(Config{Dialect: DialectVLLM, SGLangExportDir: t.TempDir()}); err == nil {
		t.Error("New: an SGLang export in the vllm dialect")
	}
}
