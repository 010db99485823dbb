// Package tui is the live terminal view of a run: a bubbletea program that
// renders live.Progress snapshots and turns Ctrl-C into the run's interrupt.
//
// The view never touches the request path. One sampler goroutine calls the
// run's progress function at a fixed rate and hands each snapshot to the
// program; everything else is a pure function of those snapshots.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/llmbench-org/llmbench/live"
)

// DefaultRate is the sampling interval when Options.Rate is zero: about
// 4 Hz, fast enough to feel live, slow enough to cost nothing.
const DefaultRate = 250 * time.Millisecond

// maxFPS caps the renderer's flush loop. Content only changes at the
// sampling rate or on a key press, and a benchmark client must not spend its
// CPU repainting (bubbletea's default is 60).
const maxFPS = 15

// Header is what stays fixed for the whole run.
type Header struct {
	Scenario, RunDir, Engine string
	Planned                  time.Duration // 0 = unknown
	// PlannedRequests is how many requests the plan sends, for a run bounded
	// by a request count rather than a duration (0 = unknown).
	PlannedRequests int
	Phases          []string // the plan's phases in order, to show which of them runs
}

// Options connects the view to the terminal and to the run's stop control.
type Options struct {
	// Input and Output are the terminal (os.Stdin/os.Stdout in production).
	// A nil Input disables the keyboard; Ctrl-C then reaches the process as
	// SIGINT, which the caller handles.
	Input  io.Reader
	Output io.Writer

	// Interrupt is called once per Ctrl-C or q. In raw mode Ctrl-C is a key,
	// not SIGINT, so the view forwards it; the caller decides what the n-th
	// call means (1st: stop arrivals and drain, 2nd: abort). It runs off the
	// event loop, so it may block briefly without freezing the view.
	Interrupt func()

	Rate time.Duration // sampling interval, DefaultRate when zero
}

// Run shows the view until ctx is done, sampling progress() at Options.Rate;
// it restores the terminal before returning. progress is called from one
// goroutine other than the caller's, so it must be safe for that. The view
// draws on the alternate screen; when ctx ends, it takes one last snapshot
// and, back on the normal screen, prints it once as the run's final frame.
func Run(ctx context.Context, h Header, progress func() live.Progress, opts Options) error {
	if opts.Output == nil {
		return errors.New("tui: Options.Output is nil")
	}
	if progress == nil {
		return errors.New("tui: progress function is nil")
	}
	rate := opts.Rate
	if rate <= 0 {
		rate = DefaultRate
	}

	// The program gets no context: a cancelled program context kills it
	// without drawing the last frame. The sampler ends it with a quit instead.
	// Its signal handler is off because SIGINT/SIGTERM belong to the caller;
	// bubbletea's would turn SIGINT into ErrInterrupted and tear the view down.
	p := tea.NewProgram(newModel(h, opts.Interrupt),
		tea.WithInput(opts.Input),
		tea.WithOutput(opts.Output),
		tea.WithoutSignalHandler(),
		tea.WithFPS(maxFPS),
	)

	exited := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { sample(ctx, rate, progress, p.Send, exited) })

	final, err := p.Run()
	close(exited)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("tui: live view: %w", err)
	}
	return printFinal(opts.Output, final)
}

// printFinal writes the last frame to the normal screen the program has
// gone back to, once, so the run's result stays in the scrollback; colours
// are cut to what the terminal supports, as the renderer does.
func printFinal(out io.Writer, final tea.Model) error {
	m, ok := final.(model)
	if !ok {
		return nil
	}
	m.ended = true
	w := colorprofile.NewWriter(out, os.Environ())
	if _, err := w.WriteString(m.render() + "\n"); err != nil {
		return fmt.Errorf("tui: last frame: %w", err)
	}
	return nil
}

// sample sends one snapshot now and one per tick, then, once ctx is done, a
// final snapshot and the end of the view. send is the program's Send, which
// blocks until the event loop takes the message and returns at once after
// the program has stopped; exited is closed when the program has stopped on
// its own, so the sampler never outlives it.
func sample(ctx context.Context, every time.Duration, progress func() live.Progress, send func(tea.Msg), exited <-chan struct{}) {
	send(sampleMsg{progress()})
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return
		case <-ctx.Done():
			send(sampleMsg{progress()})
			send(endMsg{})
			return
		case <-tick.C:
			send(sampleMsg{progress()})
		}
	}
}
