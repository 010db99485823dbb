package main

import (
	"context"
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/tui"
)

// useTUI decides the live view: the TUI on a terminal (unless --output plain),
// plain lines otherwise.
func useTUI(cio *cliIO, opts runOpts) bool {
	switch opts.output {
	case "tui":
		return true
	case "plain":
		return false
	}
	return cio.isTTY && cio.stdin != nil
}

// startProgressView shows the run's progress while it goes on: the TUI, or a
// plain line on stderr every opts.every. interrupt is the TUI's Ctrl-C (in raw
// mode Ctrl-C is a key press, not a signal). The returned function stops the
// view, restores the terminal, and waits for it.
func startProgressView(cio *cliIO, opts runOpts, rec *report.Recorder, h tui.Header, interrupt func()) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	if useTUI(cio, opts) {
		go func() {
			defer close(finished)
			err := tui.Run(ctx, h, rec.Progress, tui.Options{Input: cio.stdin, Output: cio.stdout, Interrupt: interrupt})
			if err != nil {
				fmt.Fprintf(cio.stderr, "llmbench: live view: %v\n", err)
			}
		}()
		return func() { cancel(); <-finished }
	}
	every := opts.every
	if every <= 0 {
		every = 2 * time.Second
	}
	fmt.Fprintf(cio.stderr, "llmbench: running %s against %s, writing %s\n", h.Scenario, h.Engine, h.RunDir)
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				fmt.Fprintln(cio.stderr, report.ProgressLine(rec.Progress()))
				return
			case <-t.C:
				fmt.Fprintln(cio.stderr, report.ProgressLine(rec.Progress()))
			}
		}
	}()
	return func() { cancel(); <-finished }
}
