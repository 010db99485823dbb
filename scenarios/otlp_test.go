package scenarios

import (
	"strings"
	"testing"
)

func TestOTLPReceiverYAML(t *testing.T) {
	t.Parallel()
	const load = "workload: {concurrency: 1, duration: 1s}\n"
	s, err := parseIn("f.yaml", []byte(head+load+"scrape: {otlp: {}}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if h, g := s.Scrape.OTLP.Addrs(); h != "127.0.0.1:0" || g != "127.0.0.1:0" {
		t.Errorf("defaults %q %q", h, g)
	}
	s, err = parseIn("f.yaml", []byte(head+load+"scrape: {otlp: {http: '0.0.0.0:4318', grpc: off, max_spans: 10}}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if h, g := s.Scrape.OTLP.Addrs(); h != "0.0.0.0:4318" || g != "" || s.Scrape.OTLP.MaxSpans != 10 {
		t.Errorf("set %q %q %d", h, g, s.Scrape.OTLP.MaxSpans)
	}
	if s, _ := parseIn("f.yaml", []byte(head+load), noEnv); s.Scrape.OTLP != nil {
		t.Error("a receiver without scrape.otlp")
	}
	for yaml, want := range map[string]string{
		"scrape: {otlp: {http: 4318}}\n":               "scrape.otlp.http: want host:port",
		"scrape: {otlp: {grpc: 'x:99999'}}\n":          "scrape.otlp.grpc: want host:port",
		"scrape: {otlp: {http: off, grpc: off}}\n":     "scrape.otlp: both protocols are off",
		"scrape: {otlp: {max_spans: -1}}\n":            "scrape.otlp.max_spans: want a count >= 0",
		"scrape: {otlp: {http: off}}\n":                "scrape.otlp.http: the built-in engine exports OTLP/HTTP only",
		"scrape: {otlp: {listen: '127.0.0.1:4318'}}\n": "scrape.otlp.listen: unknown field",
	} {
		_, err := parseIn("f.yaml", []byte(head+load+yaml), noEnv)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
}
