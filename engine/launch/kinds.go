package launch

import "fmt"

// kindSpec is what a kind of engine implies.
type kindSpec struct {
	argv        []string // default command line, with placeholders
	dialect     string   // metric dialect ("" = detect)
	readyPath   string   // answers 200 once the engine serves requests
	metricsPort bool     // /metrics is served on a port of its own
}

// specFor is the one place that knows each engine's conventions
// (docs/decisions/0850-launch.md says where each comes from).
func specFor(kind string) (kindSpec, error) {
	switch kind {
	case KindSGLang:
		// Without --enable-metrics SGLang serves no /metrics. Its /health
		// answers 503 until the warm-up request has run (newer versions).
		// python3, not python: Debian and Ubuntu images often lack the latter.
		return kindSpec{
			argv:      []string{"python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--host", "{host}", "--port", "{port}", "--enable-metrics"},
			dialect:   "sglang",
			readyPath: "/health",
		}, nil
	case KindVLLM:
		// vLLM serves HTTP (with /metrics, always on) only once the engine is
		// built, so /health answering is readiness.
		return kindSpec{
			argv:      []string{"vllm", "serve", "{model}", "--host", "{host}", "--port", "{port}"},
			dialect:   "vllm",
			readyPath: "/health",
		}, nil
	case KindFastDeploy:
		// FastDeploy serves /metrics on --metrics-port (default 8001) and
		// listens on 0.0.0.0 unless told otherwise.
		return kindSpec{
			argv:        []string{"python3", "-m", "fastdeploy.entrypoints.openai.api_server", "--model", "{model}", "--host", "{host}", "--port", "{port}", "--metrics-port", "{metrics_port}"},
			dialect:     "fastdeploy",
			readyPath:   "/health",
			metricsPort: true,
		}, nil
	case KindLlamaCpp:
		// llama-server needs --metrics for /metrics; its /health answers 503
		// "Loading model" until the model is loaded.
		return kindSpec{
			argv:      []string{"llama-server", "-m", "{model}", "--host", "{host}", "--port", "{port}", "--metrics"},
			dialect:   "llamacpp",
			readyPath: "/health",
		}, nil
	case KindCommand:
		// Any OpenAI-compatible server lists its models; few agree on a health path.
		return kindSpec{readyPath: "/v1/models"}, nil
	default:
		return kindSpec{}, fmt.Errorf("launch: engine kind %q: want %s, %s, %s, %s or %s",
			kind, KindSGLang, KindVLLM, KindFastDeploy, KindLlamaCpp, KindCommand)
	}
}
