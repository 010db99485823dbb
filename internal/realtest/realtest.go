// Package realtest starts the real components some tests need (a Prometheus
// server, ...) and decides what their absence means: a skip with an install
// hint on a developer's machine, a failure under LLMBENCH_REQUIRE_REAL=1 (CI
// installs them; REAL-COMPONENTS.md). It is imported by tests only.
package realtest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Require returns the path of binary, or skips the test with the install
// hint — fails it instead when LLMBENCH_REQUIRE_REAL=1.
func Require(t testing.TB, binary, install string) string {
	t.Helper()
	path, err := exec.LookPath(binary)
	if err == nil {
		return path
	}
	Missing(t, fmt.Sprintf("%s not found; install it to run this test: %s", binary, install))
	return ""
}

// Missing reports a missing real component: a skip, or a failure when
// LLMBENCH_REQUIRE_REAL=1.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("LLMBENCH_REQUIRE_REAL") == "1" {
		t.Fatalf("%s (LLMBENCH_REQUIRE_REAL=1)", msg)
	}
	t.Skip(msg)
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartPrometheus runs a real Prometheus server (the Debian package's
// binary) on a free loopback port, scraping targets (host:port, path
// /metrics) every second as job "engine", and returns its URL once it is
// ready. It is stopped when the test ends.
func StartPrometheus(t testing.TB, targets ...string) string {
	t.Helper()
	bin := Require(t, "prometheus", "apt-get install -y prometheus")
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	cfg := "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: engine\n    static_configs:\n      - targets: [" +
		strings.Join(quoted, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "prom.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	var out bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prom.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	url := "http://" + addr
	WaitFor(t, 20*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

// WaitFor polls ok every 100 ms until it holds, failing the test after limit.
func WaitFor(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
