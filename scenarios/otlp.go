package scenarios

import (
	"net"
	"strconv"
)

// OTLPReceiver turns on llmbench's OTLP trace receiver (scrape.otlp): the
// engine's per-request spans are kept in spans.jsonl and joined to the
// records (summary.json's server_timeline). The built-in engine exports to
// it; a launched vLLM gets --otlp-traces-endpoint, a launched SGLang
// --enable-trace --otlp-traces-endpoint; an external engine must
// be pointed at it by hand (the addresses must then be fixed ports).
//
//	scrape:
//	  otlp: {}                        # both on loopback, free ports
//	  otlp: {http: 0.0.0.0:4318, grpc: off}
type OTLPReceiver struct {
	// HTTP is the OTLP/HTTP protobuf listen address (POST /v1/traces).
	// Default 127.0.0.1:0 (a free port on loopback); "off" turns it off.
	HTTP string `yaml:"http,omitempty"`
	// GRPC is the OTLP/gRPC listen address (TraceService/Export). Default
	// 127.0.0.1:0; "off" turns it off.
	GRPC string `yaml:"grpc,omitempty"`
	// MaxSpans bounds the spans kept (0 = 2,000,000); later ones are counted.
	MaxSpans int `yaml:"max_spans,omitempty"`
}

// OTLPOff turns one of the receiver's protocols off.
const OTLPOff = "off"

// defaultOTLPAddr is where the receiver listens unless told: loopback,
// since anything that reaches the port can add spans to the run.
const defaultOTLPAddr = "127.0.0.1:0"

// Addrs are the listen addresses, defaults applied; "" for a protocol off.
func (o *OTLPReceiver) Addrs() (httpAddr, grpcAddr string) {
	addr := func(a string) string {
		switch a {
		case "":
			return defaultOTLPAddr
		case OTLPOff:
			return ""
		}
		return a
	}
	return addr(o.HTTP), addr(o.GRPC)
}

func (o *OTLPReceiver) validate(d *decoder, path string) {
	for _, f := range []struct{ name, v string }{{"http", o.HTTP}, {"grpc", o.GRPC}} {
		if f.v == "" || f.v == OTLPOff {
			continue
		}
		_, port, err := net.SplitHostPort(f.v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			d.failf(joinPath(path, f.name), "want host:port (port 0 picks a free one) or %q, got %q", OTLPOff, f.v)
		}
	}
	if o.HTTP == OTLPOff && o.GRPC == OTLPOff {
		d.failf(path, "both protocols are off: remove otlp instead")
	}
	if o.MaxSpans < 0 {
		d.failf(joinPath(path, "max_spans"), "want a count >= 0, got %d", o.MaxSpans)
	}
}
