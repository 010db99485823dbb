package scrape

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestInspectFileGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, dialect string
		wantErr             string
	}{
		{name: "sglang", file: "sglang.txt"},
		{name: "fastdeploy", file: "fastdeploy.txt"},
		{name: "triton", file: "triton_trtllm.txt"},
		{name: "openmetrics", file: "vllm_openmetrics.txt"},
		{name: "forced-dialect", file: "sglang.txt", dialect: "vllm"},
		{name: "no-engine", file: "not_an_engine.txt"},
		{name: "garbage", file: "garbage.txt", wantErr: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, err := InspectDialect(context.Background(), filepath.Join("testdata", tt.file), tt.dialect)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rep.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "inspect", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("output differs from %s (run with -update after checking):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestInspectReport(t *testing.T) {
	t.Parallel()
	rep, err := Inspect(context.Background(), "testdata/vllm_v08.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Older aliases are named as the source actually present.
	for c, want := range map[Concept]string{
		KVCacheUsage:     "vllm:gpu_cache_usage_perc",
		ITL:              "vllm:time_per_output_token_seconds",
		RequestsFinished: "vllm:request_success_total",
	} {
		if got := rep.Sources[c]; got != want {
			t.Errorf("source of %s = %q, want %q", c, got, want)
		}
	}
	if !rep.Detected || rep.Dialect != "vllm" || rep.Families != 11 {
		t.Errorf("detected %v dialect %q families %d", rep.Detected, rep.Dialect, rep.Families)
	}
	rep, err = Inspect(context.Background(), "testdata/fastdeploy.txt")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sources[KVCacheUsage] != "fastdeploy:gpu_cache_usage_perc" {
		t.Errorf("kv source = %q", rep.Sources[KVCacheUsage])
	}
	if _, err := Inspect(context.Background(), "testdata/missing.txt"); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := InspectDialect(context.Background(), "testdata/sglang.txt", "nope"); err == nil {
		t.Error("unknown dialect: no error")
	}
}

func TestInspectURL(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, http.StatusOK, ctText, fixture(t, "sglang.txt"))
	rep, err := Inspect(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dialect != "sglang" || rep.Row.Status != 200 || !rep.Row.OK || rep.Snapshot.Counters[RequestsFinished] != 320 {
		t.Errorf("report %+v", rep.Row)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "HTTP 200 in ") || !strings.Contains(buf.String(), "requests_finished") {
		t.Errorf("text:\n%s", buf.String())
	}

	dead, _ := serve(t, http.StatusServiceUnavailable, "text/plain", []byte("warming up"))
	rep, err = Inspect(context.Background(), dead.URL)
	if err == nil || rep.Row.OK || rep.Row.Status != 503 {
		t.Fatalf("err %v row %+v", err, rep.Row)
	}
	buf.Reset()
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "error") || !strings.Contains(buf.String(), "warming up") {
		t.Errorf("text:\n%s", buf.String())
	}
}
