package launch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/engine"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want []string // every one must appear in the error
	}{
		{"unknown kind", Config{Kind: "ollama"}, []string{`"ollama"`, "sglang, vllm, fastdeploy, llamacpp or command"}},
		{"no kind", Config{Command: []string{"x"}}, []string{`engine kind ""`}},
		{"command without argv", Config{Kind: KindCommand}, []string{"command: required"}},
		{"empty program", Config{Kind: KindCommand, Command: []string{""}}, []string{"program (first element) is empty"}},
		{"vllm without model", Config{Kind: KindVLLM}, []string{"model: required by the default vllm command line"}},
		{"host with port", Config{Kind: KindVLLM, Model: "m", Host: "127.0.0.1:8000"}, []string{"carries a port"}},
		{"host as URL", Config{Kind: KindVLLM, Model: "m", Host: "http://x"}, []string{"not a URL"}},
		{"ports out of range", Config{Kind: KindVLLM, Model: "m", Port: 70000, MetricsPort: -1}, []string{"port 70000", "metrics_port -1"}},
		{"metrics port without metrics", Config{Kind: KindCommand, Command: []string{"x"}, NoMetrics: true, MetricsPort: 9000}, []string{"no_metrics"}},
		{"negative ready", Config{Kind: KindVLLM, Model: "m", Ready: -time.Second}, []string{"ready -1s"}},
		{"relative ready path", Config{Kind: KindVLLM, Model: "m", ReadyPath: "health"}, []string{`ready_path "health"`}},
		{"env without =", Config{Kind: KindVLLM, Model: "m", Env: []string{"CUDA_VISIBLE_DEVICES"}}, []string{`env "CUDA_VISIBLE_DEVICES"`}},
		{"all at once", Config{Kind: KindSGLang, Port: -2, Ready: -1}, []string{"model: required", "port -2", "ready -1ns"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(c.cfg)
			if err == nil {
				t.Fatal("New: no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestNewAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
	}{
		{"vllm with a model", Config{Kind: KindVLLM, Model: "m"}},
		{"named kind with its own command and no model", Config{Kind: KindSGLang, Command: []string{"docker", "run", "sglang"}}},
		{"command", Config{Kind: KindCommand, Command: []string{"my-server", "--port", "{port}"}}},
		{"ipv6 host", Config{Kind: KindLlamaCpp, Model: "m.gguf", Host: "::1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if e.cfg.Ready != DefaultReady {
				t.Errorf("Ready = %v, want the default %v", e.cfg.Ready, DefaultReady)
			}
		})
	}
}

// The default command line of each kind, and how Command, Extra and the
// placeholders change it.
func TestArgv(t *testing.T) {
	t.Parallel()
	p := ports{api: 30000, metrics: 30001}
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{
			name: "sglang",
			cfg:  Config{Kind: KindSGLang, Model: "Qwen/Qwen2.5-7B-Instruct"},
			want: []string{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--host", "127.0.0.1", "--port", "30000", "--enable-metrics"},
		},
		{
			name: "vllm with extra arguments",
			cfg:  Config{Kind: KindVLLM, Model: "meta-llama/Llama-3.1-8B", Extra: []string{"--max-model-len", "4096"}},
			want: []string{"vllm", "serve", "meta-llama/Llama-3.1-8B", "--host", "127.0.0.1", "--port", "30000", "--max-model-len", "4096"},
		},
		{
			name: "fastdeploy",
			cfg:  Config{Kind: KindFastDeploy, Model: "baidu/ERNIE-4.5-0.3B-Paddle"},
			want: []string{"python3", "-m", "fastdeploy.entrypoints.openai.api_server", "--model", "baidu/ERNIE-4.5-0.3B-Paddle", "--host", "127.0.0.1", "--port", "30000", "--metrics-port", "30001"},
		},
		{
			name: "llamacpp on all interfaces",
			cfg:  Config{Kind: KindLlamaCpp, Model: "/models/qwen.gguf", Host: "0.0.0.0"},
			want: []string{"llama-server", "-m", "/models/qwen.gguf", "--host", "0.0.0.0", "--port", "30000", "--metrics"},
		},
		{
			name: "command with placeholders",
			cfg:  Config{Kind: KindCommand, Model: "m", Command: []string{"srv", "--listen={host}:{port}", "--stats", "{metrics_port}", "{model}"}},
			want: []string{"srv", "--listen=127.0.0.1:30000", "--stats", "30001", "m"},
		},
		{
			name: "named kind with its own command; JSON braces left alone",
			cfg: Config{Kind: KindSGLang, Model: "m",
				Command: []string{"docker", "run", "--network=host", "lmsysorg/sglang", "python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--port", "{port}"},
				Extra:   []string{"--extra-metric-labels", `{"team":"llm"}`}},
			want: []string{"docker", "run", "--network=host", "lmsysorg/sglang", "python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000", "--extra-metric-labels", `{"team":"llm"}`},
		},
		{
			name: "a placeholder in the model is not expanded again",
			cfg:  Config{Kind: KindVLLM, Model: "odd{port}name"},
			want: []string{"vllm", "serve", "odd{port}name", "--host", "127.0.0.1", "--port", "30000"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if diff := cmp.Diff(c.want, e.argv(p)); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

// Where each kind is reached: API root, metrics, dialect, readiness path.
func TestEndpoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		cfg       Config
		ports     ports
		want      engine.Endpoint
		wantReady string
	}{
		{
			name: "sglang", cfg: Config{Kind: KindSGLang, Model: "m"}, ports: ports{api: 30000, metrics: 30000},
			want:      engine.Endpoint{BaseURL: "http://127.0.0.1:30000/v1", MetricsURL: "http://127.0.0.1:30000/metrics", Dialect: "sglang", Model: "m"},
			wantReady: "http://127.0.0.1:30000/health",
		},
		{
			name: "vllm", cfg: Config{Kind: KindVLLM, Model: "m"}, ports: ports{api: 8000, metrics: 8000},
			want:      engine.Endpoint{BaseURL: "http://127.0.0.1:8000/v1", MetricsURL: "http://127.0.0.1:8000/metrics", Dialect: "vllm", Model: "m"},
			wantReady: "http://127.0.0.1:8000/health",
		},
		{
			name: "fastdeploy: metrics on their own port", cfg: Config{Kind: KindFastDeploy, Model: "m"}, ports: ports{api: 8180, metrics: 8181},
			want:      engine.Endpoint{BaseURL: "http://127.0.0.1:8180/v1", MetricsURL: "http://127.0.0.1:8181/metrics", Dialect: "fastdeploy", Model: "m"},
			wantReady: "http://127.0.0.1:8180/health",
		},
		{
			name: "llamacpp on a wildcard address is reached over loopback", cfg: Config{Kind: KindLlamaCpp, Model: "m.gguf", Host: "0.0.0.0"}, ports: ports{api: 8080, metrics: 8080},
			want:      engine.Endpoint{BaseURL: "http://127.0.0.1:8080/v1", MetricsURL: "http://127.0.0.1:8080/metrics", Dialect: "llamacpp", Model: "m.gguf"},
			wantReady: "http://127.0.0.1:8080/health",
		},
		{
			name: "command: dialect detected, readiness from /v1/models, IPv6", cfg: Config{Kind: KindCommand, Command: []string{"x"}, Host: "::"}, ports: ports{api: 9000, metrics: 9000},
			want:      engine.Endpoint{BaseURL: "http://[::1]:9000/v1", MetricsURL: "http://[::1]:9000/metrics"},
			wantReady: "http://[::1]:9000/v1/models",
		},
		{
			name: "command without metrics, own dialect and readiness path", cfg: Config{Kind: KindCommand, Command: []string{"ollama", "serve"}, NoMetrics: true, Dialect: "vllm", ReadyPath: "/api/version"}, ports: ports{api: 11434},
			want:      engine.Endpoint{BaseURL: "http://127.0.0.1:11434/v1", Dialect: "vllm"},
			wantReady: "http://127.0.0.1:11434/api/version",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if diff := cmp.Diff(c.want, e.endpoint(c.ports)); diff != "" {
				t.Errorf("endpoint (-want +got):\n%s", diff)
			}
			if got := e.url(c.ports.api, e.spec.readyPath); got != c.wantReady {
				t.Errorf("readiness probe %s, want %s", got, c.wantReady)
			}
		})
	}
}

// Which ports are picked, and that the picked ones are free and distinct.
func TestResolvePorts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		cfg          Config
		separate     bool // metrics on a port of their own
		wantNoMetric bool
	}{
		{"vllm: one port", Config{Kind: KindVLLM, Model: "m"}, false, false},
		{"fastdeploy: two ports", Config{Kind: KindFastDeploy, Model: "m"}, true, false},
		{"command naming {metrics_port}", Config{Kind: KindCommand, Command: []string{"x", "--metrics={metrics_port}"}}, true, false},
		{"command without metrics", Config{Kind: KindCommand, Command: []string{"x"}, NoMetrics: true}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			p, err := e.resolvePorts()
			if err != nil {
				t.Fatalf("resolvePorts: %v", err)
			}
			switch {
			case p.api == 0:
				t.Errorf("no API port: %+v", p)
			case c.wantNoMetric && p.metrics != 0:
				t.Errorf("metrics port %d, want none", p.metrics)
			case !c.wantNoMetric && c.separate && (p.metrics == 0 || p.metrics == p.api):
				t.Errorf("ports %+v: want a metrics port of its own", p)
			case !c.wantNoMetric && !c.separate && p.metrics != p.api:
				t.Errorf("ports %+v: want metrics on the API port", p)
			}
		})
	}
}

func TestLookPathUsesTheEnginesPATH(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "vllm")
	writeExecutable(t, prog, "#!/bin/sh\nexit 0\n")
	if err := os.WriteFile(filepath.Join(dir, "not-exec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	env := []string{"PATH=/nonexistent", "HOME=/x", "PATH=relative:" + dir}
	got, err := lookPath("vllm", env, "")
	if err != nil || got != prog {
		t.Errorf("lookPath(vllm) = %q, %v; want %q (the last PATH wins, relative entries skipped)", got, err, prog)
	}
	if _, err := lookPath("not-exec", env, ""); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("lookPath(not-exec): %v, want ErrNotFound", err)
	}
	if _, err := lookPath("vllm", []string{"PATH=" + t.TempDir()}, ""); err == nil || !strings.Contains(err.Error(), `"vllm" not found in PATH`) {
		t.Errorf("lookPath with an empty PATH dir: %v", err)
	}
	if got, err := lookPath("./vllm", nil, dir); err != nil || got != "./vllm" {
		t.Errorf("lookPath(./vllm) in its dir = %q, %v", got, err)
	}
	if _, err := lookPath("./not-exec", nil, dir); err == nil {
		t.Error("lookPath(./not-exec): no error")
	}
}

// engine.log holds the engine's lines redacted, however its output was
// cut into writes; the last line is written even without its newline.
func TestLogSinkRedacts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "engine.log")
	s, err := openLogSink(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"INFO args: --api-key sk-abcdef", "ghijkl --port 8000\nINFO listening on http://u:pw@0.0.0.0:8000\n", "last Bearer tok"} {
		if _, err := s.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	s.note("llmbench: engine stopped\n")
	s.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "INFO args: --api-key REDACTED --port 8000\nINFO listening on http://u:REDACTED@0.0.0.0:8000\nlast Bearer REDACTEDllmbench: engine stopped\n"
	if string(b) != want {
		t.Errorf("engine.log:\n%q\nwant\n%q", b, want)
	}
}

func writeExecutable(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
