//go:build unix

package launch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/internal/quiet"
)

// startOrFail starts e and registers a Stop, so that no engine outlives a
// failing test.
func startOrFail(t *testing.T, e *Engine) engine.Endpoint {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	got, err := e.Start(context.Background())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return got
}

// chat sends one streaming chat request and returns the content it got.
func chat(t *testing.T, baseURL, model string) string {
	t.Helper()
	body := `{"model":` + strconv.Quote(model) + `,"messages":[{"role":"user","content":"say something short"}],"max_tokens":4,"stream":true}`
	req, err := http.NewRequest(http.MethodPost, baseURL+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("chat request: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("chat request: %s: %s", resp.Status, b)
	}
	var content strings.Builder
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "data: [DONE]" {
			done = true
		}
		content.WriteString(line)
	}
	if !done {
		t.Fatalf("stream ended without [DONE]: %q", content.String())
	}
	return content.String()
}

// get is one GET; it returns the status code and body.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readPID reads the pid a script wrote to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("child pid %q: %v", b, err)
	}
	return pid
}

// waitGoneWithin polls until pid has exited; the bound only keeps a broken
// test from hanging.
func waitGoneWithin(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for !processGone(t, pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// The repository's own engine, launched as "any command" through a shell that
// keeps it as a child: it becomes ready, answers a chat request and serves
// /metrics; Stop ends the shell and its child; engine.log has everything.
func TestCommandServesAndStopsWithItsChildren(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	bin := llmbenchBinary(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	logPath := filepath.Join(dir, "engine.log")
	e, err := New(Config{
		Kind: KindCommand,
		// The shell stays the group leader; the engine is its child.
		Command: []string{"sh", "-c", `"$0" serve --addr "$1" --dialect vllm & echo $! > "$2"; wait`, bin, "{host}:{port}", pidFile},
		LogPath: logPath,
		Ready:   time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	ep := startOrFail(t, e)

	if ep.Model != "llmbench-sim" {
		t.Errorf("Model = %q, want llmbench-sim (what /v1/models lists)", ep.Model)
	}
	if ep.Dialect != "" {
		t.Errorf("Dialect = %q, want \"\" (detect) for a command", ep.Dialect)
	}
	if out := chat(t, ep.BaseURL, ep.Model); !strings.Contains(out, `"content"`) {
		t.Errorf("chat stream carried no content: %q", out)
	}
	if code, body := get(t, ep.MetricsURL); code != http.StatusOK || !strings.Contains(body, "vllm:") {
		t.Errorf("GET %s: %d, vllm metrics %v", ep.MetricsURL, code, strings.Contains(body, "vllm:"))
	}

	child := readPID(t, pidFile)
	leader := e.proc.pgid
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range []int{leader, child} {
		if !processGone(t, pid) {
			t.Errorf("process %d still running after Stop", pid)
		}
	}
	if groupAlive(leader) {
		t.Errorf("process group %d still has live members after Stop", leader)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"llmbench: launching sh -c", "listening on " + ep.BaseURL, "llmbench: engine stopped"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("engine.log lacks %q:\n%s", want, log)
		}
	}
	if err := e.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := e.Start(context.Background()); err == nil {
		t.Error("Start after Stop: no error")
	}
}

func TestExitsAtOnce(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "engine.log")
	e, err := New(Config{
		Kind:    KindCommand,
		Command: []string{"sh", "-c", "echo loading weights; echo 'RuntimeError: no CUDA device' >&2; exit 3"},
		LogPath: logPath,
		Ready:   time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(context.Background())
	if err == nil {
		t.Fatal("Start: no error")
	}
	for _, want := range []string{"engine exited with status 3 before it was ready", "last lines of " + logPath, "loading weights", "RuntimeError: no CUDA device"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "llmbench: ") {
		t.Errorf("the quoted tail holds llmbench's own notes:\n%v", err)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "llmbench: launching sh -c") || !strings.Contains(string(log), "RuntimeError: no CUDA device") || !strings.Contains(string(log), "llmbench: engine stopped (with status 3)") {
		t.Errorf("engine.log:\n%s", log)
	}
	if err := e.Stop(context.Background()); err != nil {
		t.Errorf("Stop after a failed Start: %v", err)
	}
}

func TestNeverReady(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Kind: KindCommand, Command: []string{"sh", "-c", "echo still loading; exec sleep 600"}, Ready: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(context.Background())
	if err == nil {
		t.Fatal("Start: no error")
	}
	for _, want := range []string{"engine not ready after 1s", "last probe: Get", "/v1/models", "connection refused", "last lines of its output:\n    still loading"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !processGone(t, e.proc.pgid) {
		t.Errorf("engine %d still running after the failed Start", e.proc.pgid)
	}
}

func TestStartCancelled(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Kind: KindCommand, Command: []string{"sleep", "600"}, Ready: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = e.Start(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: %v, want context.Canceled", err)
	}
	if !processGone(t, e.proc.pgid) {
		t.Errorf("engine %d still running after a cancelled Start", e.proc.pgid)
	}
}

// A Stop during Start (Ctrl-C while the model loads) ends the engine, and
// Start says it was stopped.
func TestStopDuringStart(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Kind: KindCommand, Command: []string{"sleep", "600"}, Ready: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := e.Start(context.Background())
		errc <- err
	}()
	for {
		e.mu.Lock()
		p := e.proc
		e.mu.Unlock()
		if p != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Stop(context.Background()); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "stopped before the engine was ready") {
		t.Errorf("Start: %v", err)
	}
	if !processGone(t, e.proc.pgid) {
		t.Errorf("engine %d still running", e.proc.pgid)
	}
}

// A group whose processes ignore SIGTERM is killed once Stop's ctx ends, and
// the child the shell left behind goes with it.
func TestStopKillsAGroupThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	bin := llmbenchBinary(t)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	e, err := New(Config{
		Kind:    KindCommand,
		Command: []string{"sh", "-c", `trap '' TERM; sleep 600 & echo $! > "$2"; exec "$0" serve --addr "$1"`, bin, "{host}:{port}", pidFile},
		Ready:   time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	startOrFail(t, e)
	child := readPID(t, pidFile)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = e.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "killed its process group") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop: %v, want the group killed after the deadline", err)
	}
	if !waitGoneWithin(t, child, 10*time.Second) {
		t.Errorf("child %d that ignored SIGTERM is still running: an orphan", child)
	}
	if !processGone(t, e.proc.pgid) {
		t.Errorf("leader %d still running", e.proc.pgid)
	}
}

// An engine that dies during the run: Stop says so, with its last lines.
func TestStopReportsACrashDuringTheRun(t *testing.T) {
	t.Parallel()
	bin := llmbenchBinary(t)
	e, err := New(Config{Kind: KindCommand, Command: []string{bin, "serve", "--addr", "{host}:{port}"}, Ready: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	startOrFail(t, e)
	if err := syscall.Kill(e.proc.pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-e.proc.exited
	err = e.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "engine had exited on its own on signal killed before it was stopped") || !strings.Contains(err.Error(), "listening on") {
		t.Errorf("Stop: %v", err)
	}
}

// A port given in the config that something else holds fails before
// anything is launched: a probe could be answered by the other server.
func TestFixedPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	e, err := New(Config{Kind: KindCommand, Command: []string{"sleep", "600"}, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)+" on 127.0.0.1 is not free") {
		t.Errorf("Start: %v", err)
	}
	if e.proc != nil {
		t.Error("a process was launched")
	}
}

func TestProgramNotFound(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Kind: KindVLLM, Model: "m", Env: []string{"PATH=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(context.Background()); err == nil || !strings.Contains(err.Error(), `launch vllm: program "vllm" not found in PATH`) {
		t.Errorf("Start: %v", err)
	}
}

// fakeEngine stands in for python3, vllm and llama-server: it records its
// argv, then runs the repository's engine on the host and port it was given,
// serving the model name it was given.
const fakeEngine = `#!/bin/sh
{ basename "$0"; for a in "$@"; do echo "$a"; done; } > "$FAKE_ARGV"
host=127.0.0.1 port= model=fake
while [ $# -gt 0 ]; do
  case "$1" in
    --host) host=$2; shift ;;
    --port) port=$2; shift ;;
    serve|-m|--model|--model-path|--served-model-name) model=$2; shift ;;
  esac
  shift
done
exec "$LLMBENCH" serve --addr "$host:$port" --dialect "$FAKE_DIALECT" --model "$model"
`

// The named kinds build their documented command line, find the program on
// the engine's PATH, and become ready end to end.
func TestNamedKindsLaunchTheirCommandLine(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	bin := llmbenchBinary(t)
	fakes := t.TempDir()
	for _, name := range []string{"python3", "vllm", "llama-server"} {
		writeExecutable(t, filepath.Join(fakes, name), fakeEngine)
	}
	cases := []struct {
		kind, model string
		extra       []string
		simDialect  string // the dialect the built-in engine speaks in its place
		wantModel   string
		want        func(port, metricsPort string) []string
	}{
		{
			kind: KindSGLang, model: "Qwen/Qwen2.5-0.5B-Instruct", simDialect: "sglang", wantModel: "Qwen/Qwen2.5-0.5B-Instruct",
			want: func(p, _ string) []string {
				return []string{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-0.5B-Instruct", "--host", "127.0.0.1", "--port", p, "--enable-metrics"}
			},
		},
		{
			kind: KindVLLM, model: "/models/llama", extra: []string{"--served-model-name", "llama-8b"}, simDialect: "vllm", wantModel: "llama-8b",
			want: func(p, _ string) []string {
				return []string{"vllm", "serve", "/models/llama", "--host", "127.0.0.1", "--port", p, "--served-model-name", "llama-8b"}
			},
		},
		{
			kind: KindFastDeploy, model: "baidu/ERNIE-4.5-0.3B-Paddle", simDialect: "fastdeploy", wantModel: "baidu/ERNIE-4.5-0.3B-Paddle",
			want: func(p, mp string) []string {
				return []string{"python3", "-m", "fastdeploy.entrypoints.openai.api_server", "--model", "baidu/ERNIE-4.5-0.3B-Paddle", "--host", "127.0.0.1", "--port", p, "--metrics-port", mp}
			},
		},
		{
			kind: KindLlamaCpp, model: "/models/qwen.gguf", simDialect: "sglang", wantModel: "/models/qwen.gguf",
			want: func(p, _ string) []string {
				return []string{"llama-server", "-m", "/models/qwen.gguf", "--host", "127.0.0.1", "--port", p, "--metrics"}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			argvFile := filepath.Join(t.TempDir(), "argv")
			e, err := New(Config{
				Kind: c.kind, Model: c.model, Extra: c.extra, Ready: time.Minute,
				Env: []string{"PATH=" + fakes + ":" + os.Getenv("PATH"), "FAKE_ARGV=" + argvFile, "LLMBENCH=" + bin, "FAKE_DIALECT=" + c.simDialect},
			})
			if err != nil {
				t.Fatal(err)
			}
			ep := startOrFail(t, e)

			base, err := url.Parse(ep.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			metrics, err := url.Parse(ep.MetricsURL)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(argvFile)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if diff := cmp.Diff(c.want(base.Port(), metrics.Port()), got); diff != "" {
				t.Errorf("command line (-want +got):\n%s", diff)
			}
			if ep.Dialect != c.kind {
				t.Errorf("Dialect = %q, want %q", ep.Dialect, c.kind)
			}
			if ep.Model != c.wantModel {
				t.Errorf("Model = %q, want %q", ep.Model, c.wantModel)
			}
			if base.Path != "/v1" || metrics.Path != "/metrics" {
				t.Errorf("BaseURL %s, MetricsURL %s", ep.BaseURL, ep.MetricsURL)
			}
			if c.kind == KindFastDeploy {
				if metrics.Port() == base.Port() {
					t.Errorf("fastdeploy metrics on the API port %s", base.Port())
				}
				return // the stand-in serves no separate metrics port
			}
			if code, body := get(t, ep.MetricsURL); code != http.StatusOK || !strings.Contains(body, c.simDialect+":") {
				t.Errorf("GET %s: %d, %s metrics %v", ep.MetricsURL, code, c.simDialect, strings.Contains(body, c.simDialect+":"))
			}
			chat(t, ep.BaseURL, ep.Model)
		})
	}
}
