package launch

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/quiet"
)

func TestListenersOn(t *testing.T) {
	t.Parallel()
	text := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
   4: garbage
`
	got := listenersOn(text, 8080)
	if len(got) != 1 || got[0].inode != 4242 || got[0].uid != "1000" {
		t.Errorf("listenersOn(8080) = %+v, want the one listening socket, inode 4242 of uid 1000 (not the connection, not another port, not inode 0)", got)
	}
	if got := listenersOn(text, 8081); len(got) != 1 || got[0].inode != 4444 {
		t.Errorf("listenersOn(8081) = %+v", got)
	}
}

func TestHasLaunchID(t *testing.T) {
	t.Parallel()
	id := "0123abcd"
	for _, c := range []struct {
		env  string
		want bool
	}{
		{"LLMBENCH_LAUNCH_ID=0123abcd\x00PATH=/bin\x00", true},
		{"PATH=/bin\x00LLMBENCH_LAUNCH_ID=0123abcd\x00", true},
		{"PATH=/bin\x00LLMBENCH_LAUNCH_ID=0123abcdef\x00", false}, // another launch's, longer
		{"PATH=/bin\x00XLLMBENCH_LAUNCH_ID=0123abcd\x00", false},  // another variable
		{"PATH=/bin\x00LLMBENCH_LAUNCH_ID=0123abc\x00", false},    // shorter
		{"A=LLMBENCH_LAUNCH_ID=0123abcd\x00", false},              // inside a value
		{"", false},
	} {
		if got := hasLaunchID([]byte(c.env), id); got != c.want {
			t.Errorf("hasLaunchID(%q) = %v, want %v", c.env, got, c.want)
		}
	}
}

// daemonize is an engine whose launch command, a shell line, starts
// llmbench's engine ($0) on {host}:{port} ($1) the way how says, writing the
// server's pid to $2.
func daemonize(t *testing.T, how string) *Engine {
	t.Helper()
	bin := llmbenchBinary(t)
	dir := t.TempDir()
	e, err := New(Config{
		Kind:    KindCommand,
		Command: []string{"sh", "-c", how, bin, "{host}:{port}", filepath.Join(dir, "server.pid")},
		LogPath: filepath.Join(dir, "engine.log"),
		Ready:   time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Launch commands that put the server in the background and exit 0 are
// detected; the server is provably the launch's (its group, or its id), so
// the engine runs, the note says what happened, and Stop ends the server.
func TestDaemonizingCommandsAreStopped(t *testing.T) {
	t.Parallel()
	quiet.Busy(t)
	serve := `"$0" serve --addr "$1" --dialect vllm`
	for _, c := range []struct{ name, how, why string }{
		{"background job", serve + ` >/dev/null 2>&1 & echo $! > "$2"; exit 0`, "in the engine's process group"},
		{"setsid", `setsid ` + serve + ` & echo $! > "$2"; exit 0`, "carries this launch's id"},
		{"setsid -f in a subshell (double fork)", `(setsid -f sh -c 'echo $$ > "$2"; exec "$0" serve --addr "$1"' "$0" "$1" "$2")`, "carries this launch's id"},
		{"nohup", `nohup setsid ` + serve + ` >/dev/null 2>&1 & echo $! > "$2"`, "carries this launch's id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := daemonize(t, c.how)
			ep := startOrFail(t, e)
			pid := readPID(t, filepath.Join(filepath.Dir(e.cfg.LogPath), "server.pid"))
			if processGone(t, pid) {
				t.Fatalf("server %d not running after Start", pid)
			}
			note := strings.Join(ep.Notes, "\n")
			for _, want := range []string{"the launch command exited with status 0 and left its server running in the background", "pid " + strconv.Itoa(pid), c.why, "llmbench stops it with the engine"} {
				if !strings.Contains(note, want) {
					t.Errorf("notes lack %q:\n%s", want, note)
				}
			}
			if out := chat(t, ep.BaseURL, ep.Model); !strings.Contains(out, `"content"`) {
				t.Errorf("the daemon did not serve: %q", out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := e.Stop(ctx); err != nil {
				t.Errorf("Stop: %v (a daemonized launch is not a crash)", err)
			}
			if !processGone(t, pid) {
				t.Errorf("server %d still runs after Stop", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

// A launch command that exits 0 while a server that is not provably the
// launch's comes to answer on its port (here one this test starts, as a
// container daemon would for `docker run -d`): Start fails naming it (pid,
// command, port), and it is left running — never killed on a guess.
func TestDaemonNotProvablyOursIsNamedNotKilled(t *testing.T) {
	t.Parallel()
	quiet.Busy(t)
	e := daemonize(t, `echo "$1" > "$2.addr"; exit 0`)
	addrFile := filepath.Join(filepath.Dir(e.cfg.LogPath), "server.pid.addr")
	foreign := make(chan *exec.Cmd, 1)
	go func() { // the foreign supervisor: starts the server once asked
		defer close(foreign)
		deadline := time.Now().Add(time.Minute) // a bound on a hang
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
				c := exec.Command(llmbenchBinary(t), "serve", "--addr", strings.TrimSpace(string(b)), "--model", "sk-daemon-secret-123")
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if c.Start() == nil {
					foreign <- c
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := e.Start(context.Background())
	c := <-foreign
	if c == nil {
		t.Fatalf("the foreign server never started; Start: %v", err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	if err == nil {
		t.Fatal("Start: no error")
	}
	for _, want := range []string{"pid " + strconv.Itoa(c.Process.Pid) + " `", "serve --addr", "does not carry this launch's id", "llmbench does not stop it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "sk-daemon-secret-123") {
		t.Errorf("the error quotes the server's secret:\n%v", err)
	}
	if processGone(t, c.Process.Pid) {
		t.Errorf("the server %d, not provably the launch's, was stopped", c.Process.Pid)
	}
}

// A launch command whose background child exits too leaves nothing: Start
// says the engine exited, at once rather than after the readiness bound.
func TestDaemonThatDiesFailsStart(t *testing.T) {
	t.Parallel()
	e := daemonize(t, `setsid sh -c 'echo daemon starting; sleep 0.2; echo daemon failed: no GPU; exit 1' & exit 0`)
	e.cfg.Ready = 10 * time.Minute
	_, err := e.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "engine exited with status 0 before it was ready") || !strings.Contains(err.Error(), "daemon failed: no GPU") {
		t.Errorf("Start: %v", err)
	}
}

// A fixed port held by another process is named in the error, and that
// process is left alone.
func TestFixedPortInUseNamesItsHolder(t *testing.T) {
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
	if err == nil || !strings.Contains(err.Error(), "held by pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("Start: %v, want the holder (this process) named", err)
	}
	if c, err := net.Dial("tcp", l.Addr().String()); err != nil {
		t.Errorf("the holder's listener no longer answers: %v", err)
	} else {
		c.Close()
	}
}

// Processes of the launch that left its group while the launch command runs
// on (a worker that called setsid) are stopped with the engine.
func TestStopEndsProcessesThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "escaped.pid")
	p, err := spawn("/bin/sh", []string{"sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 600' "$0" & exec sleep 600`, pidFile}, os.Environ(), "", logSpec{path: filepath.Join(dir, "engine.log")})
	if err != nil {
		t.Fatal(err)
	}
	// The pid is written once the process has left the group (after setsid).
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang
	for {
		if fi, err := os.Stat(pidFile); err == nil && fi.Size() > 0 { // echo writes it in one write
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pid file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid := readPID(t, pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
	if !waitGoneWithin(t, pid, 10*time.Second) {
		t.Errorf("process %d, which left the group, still runs", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "engine.log"))
	if !strings.Contains(string(b), "llmbench: stopped pid "+strconv.Itoa(pid)) {
		t.Errorf("engine.log does not name the process stopped outside the group:\n%s", b)
	}
}
