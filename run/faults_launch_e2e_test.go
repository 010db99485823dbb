package run

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
)

// Launched engines (issue 21 item 8): engine.log bounded however the engine
// prints, launch commands that daemonize (the server stopped when it is
// provably the launch's, the run failed naming it when not), commands that
// exit at once, print secrets, ignore SIGTERM or never become ready, a port
// held by a foreign listener, and interrupts at every moment of a launch.
// Every case's engine is this test binary acting as `llmbench serve`; every
// process a case's command starts writes its pid where the case checks that
// it is gone once the run is over (or, when it is not the launch's, that it
// was left alone).
func launchFaultCases() []faultCase {
	if runtime.GOOS != "linux" {
		return nil // the commands use setsid and the checks /proc
	}
	serve := `"$0" serve --addr "$1" --preset tiny --dialect vllm`
	req8 := "  requests: 8"
	long := "  duration: 30s"
	return []faultCase{
		{name: "launch: a plain engine", scenario: launchYAML(`exec `+serve, "", req8), bound: 60 * time.Second, want: completed,
			records: allOK, check: logHas("listening on", "llmbench: engine stopped")},

		// engine.log bounded.
		launchFlood("launch: a flood before serving, engine.log bounded", `yes "WARNING random weights: token 123 decoded to garbage" | head -c 8000000; exec `+serve, 0),
		launchFlood("launch: a flood while serving, engine.log bounded", `(yes "DEBUG scheduler step: running=2 waiting=0 kv=0.01" | head -c 12000000 &); exec `+serve, 0),
		launchFlood("launch: a 300 MB flood while serving, heap bounded", `(yes "DEBUG scheduler step: running=2 waiting=0 kv=0.01" | head -c 300000000 &); exec `+serve, 96<<20),
		{name: "launch: one endless line, withheld and counted", scenario: launchYAML(`head -c 6000000 /dev/zero | tr '\0' x; echo; exec `+serve, "    log_head_mib: 1\n    log_tail_mib: 1", req8),
			bound: 60 * time.Second, want: completed, records: allOK, check: func(t *testing.T, fr faultRun) {
				logBounded(t, fr, 2<<20)
				logHas("bytes withheld up to the end of this line")(t, fr)
				engineNote(t, fr, "withheld")
			}},
		{name: "launch: a progress bar past the line bound, kept", scenario: launchYAML(`i=0; while [ $i -lt 6000 ]; do printf 'Loading shards %d/6000\r' $i; i=$((i+1)); done; echo; exec `+serve, "", req8),
			bound: 60 * time.Second, want: completed, records: allOK, check: func(t *testing.T, fr faultRun) {
				logHas("Loading shards 5999/6000\r\n")(t, fr)
				logLacks("withheld")(t, fr)
			}},

		// Secrets the engine prints.
		{name: "launch: the engine prints its key, token and URL password", scenario: launchYAML(
			`echo "non-default args: {'api_key': ['$HF_TOKEN'], 'url': 'http://bench:$HF_TOKEN@db:5432/x'}"; echo "raw [$HF_TOKEN]" >&2; echo "Authorization: Bearer $HF_TOKEN"; exec `+serve, "", req8),
			bound: 60 * time.Second, want: completed, records: allOK, check: logHas("'api_key': ['REDACTED']", "raw [REDACTED]")},
		{name: "launch: a secret split across the engine's writes", scenario: launchYAML(
			`k="$HF_TOKEN"; printf 'loaded key %s' "$(printf %s "$k" | cut -c1-9)"; sleep 0.3; printf '%s for hub\n' "$(printf %s "$k" | cut -c10-)"; exec `+serve, "", req8),
			bound: 60 * time.Second, want: completed, records: allOK, check: logHas("loaded key REDACTED for hub")},

		// Commands that fail to start.
		{name: "launch: exits at once with an error", scenario: launchYAML(
			`echo "loading weights token=$HF_TOKEN"; echo "RuntimeError: CUDA out of memory" >&2; exit 3`, "", req8),
			bound: 30 * time.Second, want: failed, errHas: "engine exited with status 3 before it was ready",
			after: errSays("CUDA out of memory", "loading weights token=REDACTED")},
		{name: "launch: exits with the key at the end of a long last line", scenario: launchYAML(
			`printf 'x%.0s' $(seq 1 385); echo " $HF_TOKEN"; exit 1`, "", req8),
			bound: 30 * time.Second, want: failed, errHas: "engine exited with status 1", after: errSays("xxxx")},
		{name: "launch: the program does not exist", scenario: launchYAMLArgv([]string{"/nonexistent/llmbench-engine", "--port", "{port}"}, "", req8),
			bound: 30 * time.Second, want: failed, errHas: "program /nonexistent/llmbench-engine"},
		{name: "launch: never ready, bounded", scenario: launchYAMLReady(`echo still loading; echo $$ > "$2"; exec sleep 600`, "3s", "", req8),
			bound: 30 * time.Second, want: failed, errHas: "engine not ready after 3s", after: pidsGone()},
		{name: "launch: ignores SIGTERM at the end, killed", scenario: launchYAML(
			`sh -c 'trap "" TERM; while :; do sleep 1; done' & echo $! > "$2"; exec `+serve, "", req8),
			bound: 90 * time.Second, want: completed, records: allOK, after: pidsGone(), check: stderrHas("killed its process group")},
		{name: "launch: ignores SIGTERM and never ready, killed", scenario: launchYAMLReady(
			`trap "" TERM; echo $$ > "$2"; echo loading; while :; do sleep 1; done`, "2s", "", req8),
			bound: 45 * time.Second, want: failed, errHas: "engine not ready after 2s", after: pidsGone()},

		// Launch commands that daemonize: the server is the launch's, found
		// and stopped with the engine.
		launchDaemon("launch: daemonizes as a background job", serve+` >/dev/null 2>&1 & echo $! > "$2"; exit 0`, "in the engine's process group"),
		launchDaemon("launch: daemonizes with setsid", `setsid `+serve+` >/dev/null 2>&1 & echo $! > "$2"; exit 0`, "carries this launch's id"),
		launchDaemon("launch: daemonizes with a double fork", `(setsid -f sh -c 'echo $$ > "$2"; exec "$0" serve --addr "$1" --preset tiny --dialect vllm' "$0" "$1" "$2" >/dev/null 2>&1)`, "carries this launch's id"),
		launchDaemon("launch: daemonizes with nohup", `nohup setsid `+serve+` >/dev/null 2>&1 & echo $! > "$2"`, "carries this launch's id"),
		{name: "launch: a wrapper that exits 0 during the run", scenario: launchYAML(`setsid `+serve+` & echo $! > "$2"; sleep 4; exit 0`, "", "  duration: 8s"),
			bound: 60 * time.Second, want: completed, records: allOK, after: pidsGone(), check: func(t *testing.T, fr faultRun) {
				engineNote(t, fr, "the launch command exited with status 0")
			}},
		{name: "launch: a foreign server answers after the command exits, named and left alone", scenario: foreignServer(),
			bound: 60 * time.Second, want: failed, errHas: "llmbench does not stop it", after: func(t *testing.T, fr faultRun) {
				pids := readPIDs(t, fr)
				if len(pids) == 0 {
					return
				}
				errSays("pid "+strconv.Itoa(pids[0])+" `", "does not carry this launch's id")(t, fr)
				if strings.Contains(fr.err.Error(), "sk-daemon-model-secret") {
					t.Errorf("the error quotes a secret of the server's command line: %v", fr.err)
				}
				for _, pid := range pids {
					if !alive(pid) {
						t.Errorf("pid %d, not provably the launch's, was stopped", pid)
					}
					kill(pid)
				}
			}},
		{name: "launch: a daemon that dies before it answers", scenario: launchYAML(
			`setsid sh -c 'echo daemon starting; echo daemon failed: no GPU >&2; exit 1' & exit 0`, "", req8),
			bound: 45 * time.Second, want: failed, errHas: "leaving no process that carries this launch's id", after: errSays("daemon failed: no GPU")},

		// A port that is not ours.
		{name: "launch: the port is held by a foreign listener", server: engineWith(goodChat, nil), scenario: func(srv string) string {
			u, _ := url.Parse(srv)
			return launchYAML(`exec `+serve, "    port: "+u.Port(), req8)(srv)
		}, bound: 30 * time.Second, want: failed, errHas: "is not free (held by pid " + strconv.Itoa(os.Getpid())},

		// Interrupts at every moment of a launch.
		{name: "launch: interrupted while waiting for readiness", scenario: launchYAMLReady(`echo loading; echo $$ > "$2"; exec sleep 600`, "5m", "", req8),
			stopAt: time.Second, bound: 30 * time.Second, want: interrupted, after: pidsGone()},
		{name: "launch: interrupted during the run", scenario: launchYAML(`echo $$ > "$2"; exec `+serve, "", long),
			stopAt: 4 * time.Second, bound: 60 * time.Second, want: interrupted, records: allOK, after: pidsGone()},
		{name: "launch: a second interrupt during the run", scenario: launchYAML(`echo $$ > "$2"; exec `+serve, "", long),
			stopAt: 4 * time.Second, abortAt: 4500 * time.Millisecond, bound: 60 * time.Second, want: interrupted, after: pidsGone()},
		{name: "launch: interrupted while a daemonized engine serves", scenario: launchYAML(`setsid `+serve+` >/dev/null 2>&1 & echo $! > "$2"; exit 0`, "", long),
			stopAt: 4 * time.Second, bound: 60 * time.Second, want: interrupted, records: allOK, after: pidsGone()},
	}
}

// launchFlood is a case whose engine floods its output, with engine.log
// bounded to 1 + 1 MiB: the file stays within it and the run says what was
// not kept.
func launchFlood(name, script string, heap uint64) faultCase {
	return faultCase{name: name, scenario: launchYAML(script, "    log_head_mib: 1\n    log_tail_mib: 1", "  requests: 8"),
		bound: 90 * time.Second, want: completed, records: allOK, heap: heap, cpu: true, check: func(t *testing.T, fr faultRun) {
			logBounded(t, fr, 2<<20)
			engineNote(t, fr, "engine.log keeps the first 1 MiB and the last 1 MiB of the engine's output")
			b, _ := os.ReadFile(filepath.Join(fr.dir, rundir.EngineLogFile))
			if !strings.Contains(string(b), "dropped here") && !strings.Contains(string(b), "withheld") {
				t.Errorf("engine.log does not mark what it dropped")
			}
		}}
}

// launchDaemon is a case whose launch command puts the server in the
// background and exits: the run completes against it, says so, and leaves
// no process behind.
func launchDaemon(name, script, why string) faultCase {
	return faultCase{name: name, scenario: launchYAML(script, "", "  requests: 8"), bound: 60 * time.Second, want: completed,
		records: allOK, after: pidsGone(), check: func(t *testing.T, fr faultRun) {
			engineNote(t, fr, "left its server running in the background")
			engineNote(t, fr, why)
			logHas("llmbench stops it with the engine")(t, fr)
		}}
}

// foreignServer is a scenario whose launch command asks a supervisor that
// is no process of the launch (as `docker run -d` asks the container daemon)
// to start the server, and exits 0: the supervisor, a goroutine of this
// test, starts the engine and writes its pid.
func foreignServer() func(string) string {
	pids := newPIDFile()
	return func(srv string) string {
		go func() {
			deadline := time.Now().Add(time.Minute) // a bound on a hang
			for time.Now().Before(deadline) {
				b, err := os.ReadFile(pids + ".addr")
				if err != nil || !strings.HasSuffix(string(b), "\n") {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				_ = os.Remove(pids + ".addr")
				c := exec.Command(testBinary[0], "serve", "--addr", strings.TrimSpace(string(b)), "--preset", "tiny", "--model", "sk-daemon-model-secret")
				c.Env = append(os.Environ(), envAsCLI+"=1")
				if c.Start() == nil {
					_ = os.WriteFile(pids, []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o644)
					_ = c.Wait() // reaped when the case kills it
				}
				return
			}
		}()
		return launchScenario([]string{"sh", "-c", `echo "$1" > "$2.addr"; exit 0`, testBinary[0], "{host}:{port}", pids}, "60s", "", "  requests: 8")
	}
}

// launchYAML is a scenario whose engine is `sh -c script`, with $0 this test
// binary (serving when asked), $1 {host}:{port} and $2 a file for the pids
// the case checks; launch adds lines to engine.launch.
func launchYAML(script, launch, workload string) func(string) string {
	return launchYAMLReady(script, "60s", launch, workload)
}

func launchYAMLReady(script, ready, launch, workload string) func(string) string {
	pids := newPIDFile()
	return func(srv string) string {
		return launchScenario([]string{"sh", "-c", script, testBinary[0], "{host}:{port}", pids}, ready, launch, workload)
	}
}

func launchYAMLArgv(argv []string, launch, workload string) func(string) string {
	return func(string) string { return launchScenario(argv, "60s", launch, workload) }
}

func launchScenario(argv []string, ready, launch, workload string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		b, _ := json.Marshal(a)
		q[i] = string(b)
	}
	if launch != "" {
		launch = "\n" + launch
	}
	return fmt.Sprintf(`
name: fault-launch
engine:
  kind: launch
  api_key_env: FAULT_KEY
  launch:
    kind: command
    command: [%s]
    env: ["%s=1", "HF_TOKEN=${FAULT_KEY}"]
    ready_timeout: %s%s
workload:
  concurrency: 2
  prompt_tokens: 16
  output_tokens: 8
%s
scrape: {interval: 300ms, timeout: 250ms}
`, strings.Join(q, ", "), envAsCLI, ready, launch, workload)
}

// pidFiles numbers the cases' pid files: each case's command writes its own.
var pidFiles atomic.Int64

// newPIDFile is where a case's command writes the pids the case checks.
func newPIDFile() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("llmbench-launch-fault-%d-%d.pid", os.Getpid(), pidFiles.Add(1)))
}

// readPIDs reads the pids the case's command wrote (via the run's
// scenario.yaml, which names the file), and removes the file.
func readPIDs(t *testing.T, fr faultRun) []int {
	t.Helper()
	path := pidPathOf(t, fr)
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("the case's command wrote no pid: %v", err)
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Errorf("pid file %q holds no pid", b)
	}
	return pids
}

var pidPathRE = regexp.MustCompile(`llmbench-launch-fault-\d+-\d+\.pid`)

// pidPathOf finds the case's pid file in the error or the run directory's
// engine.log (whose launch line names it).
func pidPathOf(t *testing.T, fr faultRun) string {
	t.Helper()
	text := fr.stderr
	if fr.err != nil {
		text += fr.err.Error()
	}
	if fr.dir != "" {
		b, _ := os.ReadFile(filepath.Join(fr.dir, rundir.EngineLogFile))
		text += string(b)
	}
	m := pidPathRE.FindString(text)
	if m == "" {
		t.Errorf("no pid file named in engine.log or the error")
		return ""
	}
	return filepath.Join(os.TempDir(), m)
}

// pidsGone checks that every process the case's command recorded has ended
// (killing any left, so that a failing case leaves nothing either).
func pidsGone() func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		t.Helper()
		pids := readPIDs(t, fr)
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("pid %d still runs after the run", pid)
				kill(pid)
			}
		}
		_ = os.Remove(pidPathOf(t, fr))
	}
}

// killCaseLeftovers makes sure that nothing a case's command started outlives
// the case, whatever the case ended in: the pids it recorded are killed when
// the test ends if they still run. pidsGone checks (and removes the file)
// when the case gets that far; a case that failed before it did (an outcome
// other than the one wanted, beside busy neighbours) left a daemonized
// `serve --preset tiny --dialect vllm` running after go test had ended,
// reparented to init: the daemon escapes the parent-death signal by its
// fork, and llmbench stops it only at the end of a run that got there. Only
// a process that started after this test binary is killed: a pid the
// kernel has given to someone else since is left alone.
func killCaseLeftovers(t *testing.T, scenario string) {
	m := pidPathRE.FindString(scenario)
	if m == "" {
		return
	}
	path := filepath.Join(os.TempDir(), m)
	t.Cleanup(func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return // none recorded, or pidsGone has checked them
		}
		_ = os.Remove(path)
		self := startOf(os.Getpid())
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || !alive(pid) || self == 0 || startOf(pid) < self {
				continue
			}
			t.Logf("pid %d, recorded by the case's command, still ran when the case ended: killed", pid)
			kill(pid)
			for end := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond) // not our child: init reaps it
			}
		}
	})
}

// startOf is a process's start in clock ticks after boot (/proc/PID/stat's
// 22nd field), 0 when it cannot be read.
func startOf(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	// After the command's name: state is field 3, starttime field 22.
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(fields[19], 10, 64)
	return v
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// logBounded checks engine.log's size against the case's bounds (what
// llmbench's own notes add beside).
func logBounded(t *testing.T, fr faultRun, bound int64) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(fr.dir, rundir.EngineLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > bound+16<<10 {
		t.Errorf("engine.log is %d bytes, over its bound %d", fi.Size(), bound)
	}
	for _, seg := range []string{".tail", ".tail.old"} {
		if _, err := os.Stat(filepath.Join(fr.dir, rundir.EngineLogFile+seg)); err == nil {
			t.Errorf("engine.log%s left in the run directory", seg)
		}
	}
}

func logHas(wants ...string) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(fr.dir, rundir.EngineLogFile))
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				t.Errorf("engine.log lacks %q", w)
			}
		}
	}
}

func logLacks(s string) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(fr.dir, rundir.EngineLogFile))
		if strings.Contains(string(b), s) {
			t.Errorf("engine.log has %q", s)
		}
	}
}

func stderrHas(s string) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		t.Helper()
		if !strings.Contains(fr.stderr, s) {
			t.Errorf("stderr lacks %q", s)
		}
	}
}

// errSays checks the run's error, which carries the engine's last lines,
// and that it holds no secret, whole or in part.
func errSays(wants ...string) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		t.Helper()
		if fr.err == nil {
			t.Fatal("no error")
		}
		for _, w := range wants {
			if !strings.Contains(fr.err.Error(), w) {
				t.Errorf("error lacks %q: %v", w, fr.err)
			}
		}
		if strings.Contains(fr.err.Error(), faultSecret[:8]) {
			t.Errorf("the error holds the key, whole or in part: %v", fr.err)
		}
	}
}

// engineNote checks that the summary's engine notes (from run.json) say s.
func engineNote(t *testing.T, fr faultRun, s string) {
	t.Helper()
	for _, n := range fr.sum.Engine.Notes {
		if strings.Contains(n, s) {
			return
		}
	}
	t.Errorf("no engine note says %q: %q", s, fr.sum.Engine.Notes)
}
