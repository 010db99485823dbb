package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestSpanSinkLaunchSGLang: a launched SGLang gets --enable-trace and
// --otlp-traces-endpoint to the gRPC receiver as host:port (to the HTTP
// one as a URL, with the protocol in the environment, when gRPC is off),
// and trace level 2, on a copy of the scenario's launch.
func TestSpanSinkLaunchSGLang(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		cfg      *scenarios.OTLPReceiver
		prefix   string
		protocol bool
	}{
		{"grpc", &scenarios.OTLPReceiver{}, "127.0.0.1:", false},
		{"http only", &scenarios.OTLPReceiver{GRPC: scenarios.OTLPOff}, "http://127.0.0.1:", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc scenarios.Scenario
			sc.Scrape.OTLP = tc.cfg
			sink, err := startSpans(sc, dir, &strings.Builder{})
			if err != nil {
				t.Fatal(err)
			}
			defer sink.abort()
			orig := &scenarios.Launch{Kind: launch.KindSGLang, Extra: []string{"--seed", "1"}}
			got := sink.launchSpec(orig)
			if len(orig.Extra) != 2 || len(orig.Env) != 0 {
				t.Fatalf("the scenario's launch was changed: %+v", orig)
			}
			i := slices.Index(got.Extra, "--otlp-traces-endpoint")
			if i < 0 || got.Extra[i-1] != "--enable-trace" || !strings.HasPrefix(got.Extra[i+1], tc.prefix) || !slices.Contains(got.Env, "SGLANG_TRACE_LEVEL=2") {
				t.Errorf("launch %+v", got)
			}
			if slices.Contains(got.Env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf") != tc.protocol {
				t.Errorf("protocol in env %v, want %v", got.Env, tc.protocol)
			}
		})
	}
}
