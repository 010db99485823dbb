package run

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// spanSink is the run's OTLP receiver (scrape.otlp): started before the
// engine, so the engine can be told where to export, and closed once the
// load is over and the engine's last spans are in (decision 1900). A nil
// one (no scrape.otlp) does nothing.
type spanSink struct {
	recv   *otlp.Receiver
	kind   string // engine kind: how long the exporter may hold spans back
	closed bool
}

// startSpans starts the receiver the scenario asks for, writing spans.jsonl
// in runDir; nil without scrape.otlp.
func startSpans(sc scenarios.Scenario, runDir string, log io.Writer) (*spanSink, error) {
	cfg := sc.Scrape.OTLP
	if cfg == nil {
		return nil, nil
	}
	httpAddr, grpcAddr := cfg.Addrs()
	recv, err := otlp.Start(otlp.Config{HTTP: httpAddr, GRPC: grpcAddr, Path: filepath.Join(runDir, rundir.SpansFile), MaxSpans: cfg.MaxSpans})
	if err != nil {
		return nil, fmt.Errorf("scrape.otlp: %w", err)
	}
	for _, ep := range []string{recv.HTTPEndpoint(), recv.GRPCEndpoint()} {
		if ep != "" {
			fmt.Fprintf(log, "llmbench: receiving OTLP traces at %s\n", ep)
		}
	}
	return &spanSink{recv: recv, kind: sc.Engine.Kind}, nil
}

// simArgs are `llmbench serve`'s flags for exporting to the receiver.
func (s *spanSink) simArgs() []string {
	if ep := s.httpEndpoint(); ep != "" {
		return []string{"--otlp-traces-endpoint", ep}
	}
	return nil
}

// httpEndpoint is the OTLP/HTTP URL the built-in engine exports to.
func (s *spanSink) httpEndpoint() string {
	if s == nil {
		return ""
	}
	return s.recv.HTTPEndpoint()
}

// launchArgs turns a launched vLLM's tracing on: --otlp-traces-endpoint to
// the receiver (gRPC, vLLM's default protocol, when it is on; else
// HTTP/protobuf, said in OTEL_EXPORTER_OTLP_TRACES_PROTOCOL), and the
// batch processor's delay cut from 5 s to 500 ms so the last spans are in
// soon after the load. A launched SGLang gets its own flags
// (otlp_sglang.go); other kinds get nothing.
func (s *spanSink) launchArgs(kind string) (extra, env []string) {
	if s != nil && kind == launch.KindSGLang {
		return s.sglangLaunchArgs()
	}
	if s == nil || kind != launch.KindVLLM {
		return nil, nil
	}
	env = []string{"OTEL_BSP_SCHEDULE_DELAY=500"}
	if ep := s.recv.GRPCEndpoint(); ep != "" {
		return []string{"--otlp-traces-endpoint", ep}, append(env, "OTEL_EXPORTER_OTLP_TRACES_INSECURE=true")
	}
	return []string{"--otlp-traces-endpoint", s.recv.HTTPEndpoint()}, append(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf")
}

// abort closes the receiver at once (the run failed, or the engine is
// stopping after finish already ran).
func (s *spanSink) abort() {
	if s == nil || s.closed {
		return
	}
	s.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.recv.Close(ctx)
}

// launchSpec is l with launchArgs added, a copy: the scenario's own is
// left as it is.
func (s *spanSink) launchSpec(l *scenarios.Launch) *scenarios.Launch {
	extra, env := s.launchArgs(l.Kind)
	if len(extra) == 0 {
		return l
	}
	c := *l
	c.Extra, c.Env = append(slices.Clone(l.Extra), extra...), append(slices.Clone(l.Env), env...)
	return &c
}

// finish waits until the engine has exported what it holds back (no export
// for quiet, at most 15 s), closes the receiver and returns what to note in
// run.json: spans refused, dropped or not written.
func (s *spanSink) finish() []string {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	quiet := 1500 * time.Millisecond // three of vLLM's batch delays as launched
	if s.kind == scenarios.KindSim {
		quiet = 400 * time.Millisecond // four of the built-in engine's
	}
	last, lastAt := s.recv.Stats().Exports, time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && time.Since(lastAt) < quiet; {
		time.Sleep(50 * time.Millisecond)
		if n := s.recv.Stats().Exports; n != last {
			last, lastAt = n, time.Now()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.recv.Close(ctx)
	st := s.recv.Stats()
	var notes []string
	if st.Rejected+st.Bad > 0 {
		notes = append(notes, fmt.Sprintf("otlp: %d spans and %d whole exports refused: %s", st.Rejected, st.Bad, st.Problem))
	}
	if st.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("otlp: %d spans past scrape.otlp.max_spans counted, not kept", st.Dropped))
	}
	if err != nil || st.WriteErr != "" {
		notes = append(notes, fmt.Sprintf("otlp: spans.jsonl incomplete: %v %s", err, st.WriteErr))
	}
	return notes
}
