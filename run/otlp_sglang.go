package run

import "strings"

// sglangLaunchArgs turn a launched SGLang's request tracing on (decision
// 2400): --enable-trace and --otlp-traces-endpoint to the gRPC receiver as
// host:port (SGLang's default protocol), else to the HTTP one as a URL
// with OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf. SGLANG_TRACE_LEVEL=2
// leaves out level 3's span per decode step (the timeline reads the
// level-1 decode_forward slice), and SGLang's batch delay is its default
// 500 ms, said so the run's wait for the last spans holds.
func (s *spanSink) sglangLaunchArgs() (extra, env []string) {
	env = []string{"SGLANG_TRACE_LEVEL=2", "SGLANG_OTLP_EXPORTER_SCHEDULE_DELAY_MILLIS=500"}
	if ep := s.recv.GRPCEndpoint(); ep != "" {
		return []string{"--enable-trace", "--otlp-traces-endpoint", strings.TrimPrefix(ep, "http://")}, env
	}
	return []string{"--enable-trace", "--otlp-traces-endpoint", s.recv.HTTPEndpoint()}, append(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf")
}
