package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmbench-org/llmbench/report"
)

// sampleMsg carries one Progress snapshot from the sampler.
type sampleMsg struct{ p report.Progress }

// endMsg says the run's context is done: draw the last frame and quit.
type endMsg struct{}

// Size the view assumes until the terminal reports its own.
const (
	defaultWidth  = 80
	defaultHeight = 24
)

// model is the view's whole state. It is a value: Update returns a changed
// copy, so a test can hold any intermediate state.
type model struct {
	header    Header
	interrupt func()

	width, height int

	last       report.Progress
	reqRate    history // requests/s, one point per second of run time
	tokRate    history // output tokens/s, likewise
	interrupts int     // Ctrl-C / q presses so far
	ended      bool    // the run's context is done; this is the last frame
}

func newModel(h Header, interrupt func()) model {
	return model{header: h, interrupt: interrupt, width: defaultWidth, height: defaultHeight}
}

func (m model) Init() tea.Cmd { return nil }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case sampleMsg:
		m.last = msg.p
		m.reqRate = m.reqRate.observe(msg.p.Elapsed, msg.p.RequestsPerSec)
		m.tokRate = m.tokRate.observe(msg.p.Elapsed, msg.p.OutputTokensPerSec)
	case tea.WindowSizeMsg:
		if msg.Width > 0 && msg.Height > 0 {
			m.width, m.height = msg.Width, msg.Height
		}
	case tea.KeyPressMsg:
		// A held key repeats; only deliberate presses count towards "abort".
		if msg.IsRepeat || m.ended {
			break
		}
		switch msg.String() {
		case "ctrl+c", "q":
			m.interrupts++
			return m, m.interruptCmd()
		}
	case endMsg:
		m.ended = true
		return m, tea.Quit
	}
	return m, nil
}

// interruptCmd runs the caller's callback off the event loop, as every side
// effect in bubbletea should; nil when there is no callback.
func (m model) interruptCmd() tea.Cmd {
	if m.interrupt == nil {
		return nil
	}
	f := m.interrupt
	return func() tea.Msg { f(); return nil }
}

// historyLen bounds the sparkline memory: two minutes at one point a second,
// wider than any sensible terminal row.
const historyLen = 120

// history is a fixed ring of per-second rate points. An array, not a slice,
// so copies of the model never share it.
type history struct {
	points  [historyLen]float64
	n       int   // points held, at most historyLen
	next    int   // ring index the next point goes to
	lastSec int64 // run-time second of the newest point
}

// observe folds one sample in: a sample in a new second of run time adds a
// point, one in the same second replaces the newest point, so the sparkline
// advances with run time, whatever the sampling rate.
func (h history) observe(elapsed time.Duration, v float64) history {
	sec := int64(elapsed / time.Second)
	if h.n > 0 && sec <= h.lastSec {
		h.points[(h.next+historyLen-1)%historyLen] = v
		return h
	}
	h.points[h.next] = v
	h.next = (h.next + 1) % historyLen
	h.n = min(h.n+1, historyLen)
	h.lastSec = sec
	return h
}

// latest returns up to k of the newest points, oldest first.
func (h history) latest(k int) []float64 {
	k = max(0, min(k, h.n))
	out := make([]float64, k)
	for i := range k {
		out[i] = h.points[(h.next-k+i+2*historyLen)%historyLen]
	}
	return out
}
