package engines

// fastdeploy is Baidu's FastDeploy (fastdeploy.entrypoints.openai.api_server).
var fastdeploy = Family{
	Name:    FastDeploy,
	Display: "FastDeploy",
	IDs: IDs{
		BodyField: "request_id",
		Echo:      "request_id as sent when it begins chatcmpl- or cmpl-, else prefixed with them; the trace log adds _<choice>",
	},
	// FastDeploy serves none of the tokenizer APIs: they are tried in the
	// unknown engine's order, in case a gateway in front does.
	Tokenize: TokenizeAPIs,
	Lengths:  Lengths{How: "ignore_eos alone (min_tokens is not one of its parameters)"},
	// FastDeploy serves /metrics on --metrics-port (default 8001) and
	// listens on 0.0.0.0 unless told otherwise.
	Launch: &Launch{
		Argv:        []string{"python3", "-m", "fastdeploy.entrypoints.openai.api_server", "--model", "{model}", "--host", "{host}", "--port", "{port}", "--metrics-port", "{metrics_port}"},
		ReadyPath:   "/health",
		MetricsPort: true,
	},
	Reconcile: Reconcile{
		TTFTSpan:    "API-server arrival to the token processor's first token (older releases start at inference start and exclude the queue)",
		OutsideTTFT: "postprocessing, the SSE write, network, the client's parsing",
	},
	Wire: Wire{Quirks: []string{
		"its TTFT and per-step latency histograms' buckets end at 1 s: slower requests are only in +Inf",
		"/metrics on a port of its own",
		"a per-request trace log (trace_logger.log) with the phases of every request",
	}},
	Sim: true,
}
