package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestSpanSinkLaunch: a launched vLLM gets --otlp-traces-endpoint to the
// gRPC receiver (HTTP/protobuf, said in the environment, when gRPC is off)
// and a short batch delay, on a copy of the scenario's launch; other kinds
// (SGLang's own flags: otlp_sglang_test.go), and runs without scrape.otlp,
// get nothing.
func TestSpanSinkLaunch(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		cfg      *scenarios.OTLPReceiver
		kind     string
		wantFlag string // prefix of the endpoint; "" = no flag
		wantEnv  string
	}{
		{"grpc", &scenarios.OTLPReceiver{}, launch.KindVLLM, "http://127.0.0.1:", "OTEL_EXPORTER_OTLP_TRACES_INSECURE=true"},
		{"http only", &scenarios.OTLPReceiver{GRPC: scenarios.OTLPOff}, launch.KindVLLM, "http://127.0.0.1:", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf"},
		{"llama.cpp", &scenarios.OTLPReceiver{}, launch.KindLlamaCpp, "", ""},
		{"no receiver", nil, launch.KindVLLM, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc scenarios.Scenario
			sc.Scrape.OTLP = tc.cfg
			sink, err := startSpans(sc, dir, &strings.Builder{})
			if err != nil {
				t.Fatal(err)
			}
			defer sink.abort()
			orig := &scenarios.Launch{Kind: tc.kind, Extra: []string{"--seed", "1"}, Env: []string{"A=1"}}
			got := sink.launchSpec(orig)
			if len(orig.Extra) != 2 || len(orig.Env) != 1 {
				t.Fatalf("the scenario's launch was changed: %+v", orig)
			}
			if tc.wantFlag == "" {
				if got != orig {
					t.Errorf("got %+v, want the launch as it was", got)
				}
				return
			}
			i := slices.Index(got.Extra, "--otlp-traces-endpoint")
			if i != 2 || !strings.HasPrefix(got.Extra[i+1], tc.wantFlag) || !slices.Contains(got.Env, tc.wantEnv) || !slices.Contains(got.Env, "OTEL_BSP_SCHEDULE_DELAY=500") {
				t.Errorf("launch %+v", got)
			}
			if tc.cfg.GRPC == scenarios.OTLPOff && !strings.HasSuffix(got.Extra[i+1], "/v1/traces") {
				t.Errorf("HTTP endpoint %q", got.Extra[i+1])
			}
		})
	}
	var sc scenarios.Scenario
	sc.Scrape.OTLP = &scenarios.OTLPReceiver{HTTP: "127.0.0.1:0", GRPC: scenarios.OTLPOff}
	sink, err := startSpans(sc, dir, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if notes := sink.finish(); len(notes) != 0 || sink.finish() != nil {
		t.Errorf("a quiet receiver's notes %q", notes)
	}
}
