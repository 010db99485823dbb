package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// cputimeCmd runs a tool and writes the CPU seconds its process tree used,
// "user system", to a file: the rusage wait4 reports for the child, which
// counts the descendants it reaped (a Python tool's worker processes), as
// /usr/bin/time does, without needing it installed. The tool's exit status
// is returned; SIGINT and SIGTERM are passed on to it (timeout's stop).
func cputimeCmd(args []string, stdout io.Writer) (exit int, err error) {
	if len(args) < 3 || args[0] != "-o" {
		return 2, fmt.Errorf("usage: peerjoin cputime -o FILE COMMAND [ARGS…]")
	}
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 127, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	st := cmd.ProcessState
	if werr != nil && !errors.As(werr, new(*exec.ExitError)) {
		return 1, werr
	}
	line := fmt.Sprintf("%.3f %.3f\n", st.UserTime().Seconds(), st.SystemTime().Seconds())
	if err := os.WriteFile(args[1], []byte(line), 0o644); err != nil {
		return 1, err
	}
	if code := st.ExitCode(); code >= 0 {
		return code, nil
	}
	return 128 + int(st.Sys().(syscall.WaitStatus).Signal()), nil
}
