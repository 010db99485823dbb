package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readPid waits for a file holding a pid and a newline.
func readPid(t *testing.T, path string, helper *exec.Cmd) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var pid int
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			if _, err := fmt.Sscan(string(b), &pid); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			_ = helper.Process.Kill()
			_ = helper.Wait()
			t.Fatalf("%s never written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A llmbench killed outright takes its engine's first process with it
// (Pdeathsig) but not that process's children; the GroupFile it left in the
// run directory lets KillLeftover end them.
func TestKillLeftoverEndsOrphanedChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "engine.pid")
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+pidFile, helperTreeEnv+"=1")
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	child := readPid(t, pidFile+".child", helper)
	leader := readPid(t, pidFile, helper)
	t.Cleanup(func() { // a failed test leaves no sleep behind
		if t.Failed() && groupAlive(leader) {
			_ = syscall.Kill(-leader, syscall.SIGKILL)
		}
	})
	// The helper writes the GroupFile once its engine started, while the
	// engine writes the pid files: on a loaded machine they may come first.
	l, err := readGroupFile(filepath.Join(dir, GroupFile))
	for deadline := time.Now().Add(30 * time.Second); (err != nil || l.start == "") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		l, err = readGroupFile(filepath.Join(dir, GroupFile))
	}
	if err != nil || l.pgid != leader || l.missing() != "" || l.owner != helper.Process.Pid {
		t.Fatalf("GroupFile: %+v, %v; want group %d with its boot, start, command and owner %d", l, err, leader, helper.Process.Pid)
	}

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if !waitGoneWithin(t, leader, 10*time.Second) {
		t.Fatalf("engine %d outlived its killed llmbench", leader)
	}
	if processGone(t, child) {
		t.Fatalf("the engine's child %d died with it: the stand-in tree does not show the orphan", child)
	}

	pgid, err := KillLeftover(dir)
	if err != nil || pgid != leader {
		t.Fatalf("KillLeftover = %d, %v; want %d", pgid, err, leader)
	}
	if !waitGoneWithin(t, child, 10*time.Second) {
		t.Errorf("orphaned child %d still runs after KillLeftover", child)
	}
	if _, err := os.Stat(filepath.Join(dir, GroupFile)); !os.IsNotExist(err) {
		t.Errorf("GroupFile still there after KillLeftover: %v", err)
	}
	if pgid, err := KillLeftover(dir); pgid != 0 || err != nil {
		t.Errorf("second KillLeftover = %d, %v; want nothing to do", pgid, err)
	}
}

// A GroupFile whose group is gone, from another boot, or whose number is now
// another process's kills nothing and is removed; a normal stop removes it.
func TestKillLeftoverSparesOthers(t *testing.T) {
	t.Parallel()
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	pid := sleeper.Process.Pid
	me := groupIdentity(pid)

	const deadOwner = "owner 2147483647 1" // no process has that id
	cases := []struct {
		name, content string
		err           string
		kept          bool
	}{
		{"other boot", fmt.Sprintf("%d\nboot_id 00000000-dead\nstart %s\ncommand %s\n%s\n", pid, me.start, me.command, deadOwner), "", false},
		{"reused number", fmt.Sprintf("%d\nboot_id %s\nstart 1\ncommand %s\n%s\n", pid, me.bootID, me.command, deadOwner), "", false},
		// Another run's engine, its llmbench alive (here: this test): the
		// group matches in every field and is still not touched.
		{"owner alive", fmt.Sprintf("%d\nboot_id %s\nstart %s\ncommand %s\nowner %d %s\n", pid, me.bootID, me.start, me.command, os.Getpid(), startTime(os.Getpid())), "", true},
		// A number alone may be anyone's group: reported, never acted on.
		{"number only", fmt.Sprintf("%d\n", pid), "lacks boot_id, start, command, owner", true},
		{"no owner", fmt.Sprintf("%d\nboot_id %s\nstart %s\ncommand %s\n", pid, me.bootID, me.start, me.command), "lacks owner", true},
		{"garbage", "init\n", "is not a process group id", true},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, GroupFile)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		pgid, err := KillLeftover(dir)
		if pgid != 0 || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: KillLeftover = %d, %v; want 0, %q", c.name, pgid, err, c.err)
		}
		if _, err := os.Stat(path); c.kept != (err == nil) {
			t.Errorf("%s: GroupFile kept = %v, want %v", c.name, err == nil, c.kept)
		}
	}
	if processGone(t, pid) {
		t.Fatal("a group that is not the engine's was killed")
	}
	if pgid, err := KillLeftover(t.TempDir()); pgid != 0 || err != nil {
		t.Errorf("no GroupFile: KillLeftover = %d, %v", pgid, err)
	}

	// A stopped engine leaves no GroupFile.
	dir := t.TempDir()
	p, err := spawn("/bin/sh", []string{"sh", "-c", "sleep 60 & sleep 60"}, nil, "", logSpec{path: filepath.Join(dir, "engine.log")})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := readGroupFile(filepath.Join(dir, GroupFile)); err != nil || l.pgid != p.pgid {
		t.Errorf("GroupFile of a running engine: %+v, %v; want group %d", l, err, p.pgid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, GroupFile)); !os.IsNotExist(err) {
		t.Errorf("GroupFile still there after a stop: %v", err)
	}
}

// A dead llmbench's launch that daemonized left its server outside the
// engine's group: the reaper finds it by the launch's id and ends it, and
// spares a process that carries another launch's id.
func TestKillLeftoverEndsTheLaunchsDaemon(t *testing.T) {
	t.Parallel()
	start := func(id string) *exec.Cmd {
		c := exec.Command("sleep", "60")
		c.Env = append(os.Environ(), launchIDEnv+"="+id)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	id, other := newLaunchID(), newLaunchID()
	daemon, bystander := start(id), start(other)
	gone := exec.Command("true") // its number is no group now
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	content := fmt.Sprintf("%d\nboot_id %s\nstart 1\ncommand sh\nowner 2147483647 1\nlaunch_id %s\n", gone.Process.Pid, bootID(), id)
	if err := os.WriteFile(filepath.Join(dir, GroupFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := KillLeftover(dir); err != nil {
		t.Fatalf("KillLeftover: %v", err)
	}
	_ = daemon.Wait() // reaped here, so that its end can be seen
	if st := daemon.ProcessState; st == nil || st.Exited() || st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the launch's daemon: %v, want killed", st)
	}
	if processGone(t, bystander.Process.Pid) {
		t.Error("a process of another launch was killed")
	}
}
