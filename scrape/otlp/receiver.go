package otlp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxSpans bounds the spans one run keeps (a run of a million
// requests with one span each fits); later spans are counted, not kept.
const DefaultMaxSpans = 2_000_000

// TracesPath is the OTLP/HTTP traces path.
const TracesPath = "/v1/traces"

// Config says where a Receiver listens and where spans go.
type Config struct {
	// HTTP and GRPC are the listen addresses (host:port; port 0 picks a
	// free one); "" turns that protocol off. Loopback unless a scenario
	// says otherwise: anything that reaches the port can add spans.
	HTTP, GRPC string
	// Path receives one JSON line per kept span (spans.jsonl); "" keeps
	// them in memory only (Spans).
	Path string
	// MaxSpans bounds the spans kept (0 = DefaultMaxSpans).
	MaxSpans int
}

// Stats is what a Receiver saw.
type Stats struct {
	Exports  int    `json:"exports"`             // export requests accepted
	Spans    int    `json:"spans"`               // spans kept
	Rejected int    `json:"rejected"`            // spans refused (bad ids or times, over a bound)
	Bad      int    `json:"bad_exports"`         // export requests refused whole (not OTLP, too large)
	Problem  string `json:"problem,omitempty"`   // the first refusal's reason
	Dropped  int    `json:"dropped,omitempty"`   // spans over MaxSpans, counted only
	WriteErr string `json:"write_err,omitempty"` // the first error writing Path
}

// Receiver is a running OTLP trace receiver.
type Receiver struct {
	cfg     Config
	httpLn  net.Listener
	grpcLn  net.Listener
	httpSrv *http.Server
	grpcSrv *grpc.Server

	mu    sync.Mutex
	stats Stats
	spans []Span // kept in memory when Path is ""
	f     *os.File
	w     *bufio.Writer
}

// Start listens on cfg's addresses and serves until Close.
func Start(cfg Config) (*Receiver, error) {
	if cfg.MaxSpans <= 0 {
		cfg.MaxSpans = DefaultMaxSpans
	}
	r := &Receiver{cfg: cfg}
	if cfg.Path != "" {
		f, err := os.OpenFile(cfg.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("otlp: %w", err)
		}
		r.f, r.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	if err := r.listen(); err != nil {
		r.Close(context.Background())
		return nil, err
	}
	return r, nil
}

func (r *Receiver) listen() error {
	if r.cfg.HTTP != "" {
		ln, err := net.Listen("tcp", r.cfg.HTTP)
		if err != nil {
			return fmt.Errorf("otlp: listen http: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc(TracesPath, r.serveHTTP)
		r.httpLn, r.httpSrv = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
		go func() { _ = r.httpSrv.Serve(ln) }()
	}
	if r.cfg.GRPC != "" {
		ln, err := net.Listen("tcp", r.cfg.GRPC)
		if err != nil {
			return fmt.Errorf("otlp: listen grpc: %w", err)
		}
		r.grpcLn, r.grpcSrv = ln, grpc.NewServer(grpc.MaxRecvMsgSize(MaxBodyBytes))
		coltracepb.RegisterTraceServiceServer(r.grpcSrv, grpcService{r: r})
		go func() { _ = r.grpcSrv.Serve(ln) }()
	}
	return nil
}

// HTTPEndpoint is the OTLP/HTTP traces URL ("" when HTTP is off): what
// vLLM's --otlp-traces-endpoint takes with
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf, and the built-in
// engine's.
func (r *Receiver) HTTPEndpoint() string {
	if r.httpLn == nil {
		return ""
	}
	return "http://" + r.httpLn.Addr().String() + TracesPath
}

// GRPCEndpoint is the OTLP/gRPC endpoint ("" when gRPC is off): vLLM's
// default protocol takes it as --otlp-traces-endpoint.
func (r *Receiver) GRPCEndpoint() string {
	if r.grpcLn == nil {
		return ""
	}
	return "http://" + r.grpcLn.Addr().String()
}

// Stats returns what the receiver saw so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Spans returns the spans kept in memory (Config.Path "").
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Close stops listening, lets exports in flight finish until ctx ends, and
// flushes the spans file.
func (r *Receiver) Close(ctx context.Context) error {
	if r.httpSrv != nil {
		_ = r.httpSrv.Shutdown(ctx)
	}
	if r.grpcSrv != nil {
		stopped := make(chan struct{})
		go func() { r.grpcSrv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-ctx.Done():
			r.grpcSrv.Stop()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.w != nil {
		err = errors.Join(r.w.Flush(), r.f.Close())
		r.w = nil
	}
	return err
}

// accept keeps one export's spans and returns how many were refused, with
// the first reason.
func (r *Receiver) accept(d Decoded) (rejected int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Exports++
	r.stats.Rejected += d.Rejected
	if d.Reason != "" && r.stats.Problem == "" {
		r.stats.Problem = d.Reason
	}
	keep := min(len(d.Spans), max(r.cfg.MaxSpans-r.stats.Spans, 0))
	r.stats.Dropped += len(d.Spans) - keep
	r.stats.Spans += keep
	for i := range d.Spans[:keep] {
		r.keep(&d.Spans[i])
	}
	return d.Rejected + len(d.Spans) - keep, d.Reason
}

// keep writes or holds one span; r.mu is held.
func (r *Receiver) keep(s *Span) {
	if r.w == nil {
		if r.cfg.Path == "" {
			r.spans = append(r.spans, *s)
		}
		return
	}
	b, err := json.Marshal(s)
	if err == nil {
		b = append(b, '\n')
		_, err = r.w.Write(b)
	}
	if err != nil && r.stats.WriteErr == "" {
		r.stats.WriteErr = err.Error()
	}
}

// refuse counts an export refused whole.
func (r *Receiver) refuse(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Bad++
	if r.stats.Problem == "" {
		r.stats.Problem = err.Error()
	}
}

// serveHTTP is POST /v1/traces with an OTLP body, protobuf
// (application/x-protobuf) or JSON (application/json, json.go), either
// maybe gzipped; the response is in the request's encoding, as OTLP/HTTP
// asks.
func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	decode, write := DecodeProto, writeProto
	switch ct {
	case "application/x-protobuf":
	case "application/json":
		decode, write = DecodeJSON, writeJSON
	default:
		r.refuse(fmt.Errorf("otlp: content type %q (want application/x-protobuf or application/json)", req.Header.Get("Content-Type")))
		http.Error(w, "Content-Type must be application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := readBody(req)
	if err == nil {
		var d Decoded
		if d, err = decode(body); err == nil {
			rejected, reason := r.accept(d)
			write(w, exportResponse(rejected, reason))
			return
		}
	}
	r.refuse(err)
	code := http.StatusBadRequest
	if errors.Is(err, ErrTooLarge) {
		code = http.StatusRequestEntityTooLarge
	}
	http.Error(w, err.Error(), code)
}

// readBody reads at most MaxBodyBytes of the body, gunzipped when it says
// Content-Encoding: gzip (the bound applies after decompression: a small
// bomb is refused, not inflated).
func readBody(req *http.Request) ([]byte, error) {
	var src io.Reader = http.MaxBytesReader(nil, req.Body, MaxBodyBytes+1)
	switch req.Header.Get("Content-Encoding") {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("otlp: gzip body: %w", err)
		}
		src = zr
	default:
		return nil, fmt.Errorf("otlp: content encoding %q (identity or gzip)", req.Header.Get("Content-Encoding"))
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(src, MaxBodyBytes+1))
	var mbe *http.MaxBytesError
	switch {
	case n > MaxBodyBytes, errors.As(err, &mbe):
		return nil, ErrTooLarge
	case err != nil:
		return nil, fmt.Errorf("otlp: read body: %w", err)
	}
	return buf.Bytes(), nil
}

func exportResponse(rejected int, reason string) *coltracepb.ExportTraceServiceResponse {
	resp := &coltracepb.ExportTraceServiceResponse{}
	if rejected > 0 {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: int64(rejected), ErrorMessage: reason}
	}
	return resp
}

func writeProto(w http.ResponseWriter, m *coltracepb.ExportTraceServiceResponse) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, m *coltracepb.ExportTraceServiceResponse) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(encodeJSON(m))
}

// grpcService is TraceService/Export.
type grpcService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	rejected, reason := g.r.accept(Flatten(req))
	return exportResponse(rejected, reason), nil
}
