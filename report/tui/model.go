package tui

import (
	"math"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// sampleMsg carries one Progress snapshot from the sampler.
type sampleMsg struct{ p live.Progress }

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

	last       live.Progress
	reqRate    history // requests/s, one point per second of run time
	tokRate    history // output tokens/s, likewise
	inFlight   history // the client's requests in flight, likewise
	engineBusy history // the engine's running + waiting (NaN: not known)
	kv         history // the engine's KV cache usage, 0–1 (NaN: not known)
	sent       ring[sentPoint]
	interrupts int  // Ctrl-C / q presses so far
	ended      bool // the run's context is done; this is the last frame

	help  bool // the key help replaces the panes
	pane  pane // the pane in focus
	warns warnAges
}

// sentPoint is one second's count of requests sent, for the send rate that
// an ETA by request count needs (Progress has totals, not that rate).
type sentPoint struct {
	at   time.Duration
	sent int
}

// pane is one of the dashboard's panes; keys move the focus between them.
type pane int

const (
	paneLoad pane = iota
	paneFindings
	panePhases
	paneEngine
	paneCount
)

func (p pane) String() string {
	return [...]string{"load", "findings", "phases", "engine"}[p]
}

// warnAges remembers since when (run time) each warning or failure has been
// reported, so a finding seen in one window only is shown as new rather than
// raised: the live window can flag for a second what the next one clears.
// At most maxWarns ids, in an array so copies of the model never share it.
type warnAges struct {
	n     int
	ids   [maxWarns]string
	since [maxWarns]time.Duration
}

const maxWarns = 32

// confirmAfter is how long a warning must persist before the view raises it.
const confirmAfter = 2 * time.Second

func (w warnAges) observe(now time.Duration, fs []reconcile.Finding) warnAges {
	var next warnAges
	for _, f := range fs {
		if f.Severity == reconcile.Info || next.n == maxWarns || next.find(f.ID) >= 0 {
			continue
		}
		since := now
		if i := w.find(f.ID); i >= 0 && w.since[i] <= now {
			since = w.since[i]
		}
		next.ids[next.n], next.since[next.n] = f.ID, since
		next.n++
	}
	return next
}

func (w warnAges) find(id string) int {
	for i := range w.n {
		if w.ids[i] == id {
			return i
		}
	}
	return -1
}

// confirmed says whether the finding has been reported for confirmAfter.
func (w warnAges) confirmed(id string, now time.Duration) bool {
	i := w.find(id)
	return i >= 0 && now-w.since[i] >= confirmAfter
}

func newModel(h Header, interrupt func()) model {
	return model{header: h, interrupt: interrupt, width: defaultWidth, height: defaultHeight}
}

func (m model) Init() tea.Cmd { return nil }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case sampleMsg:
		p := msg.p
		m.last = p
		m.reqRate = m.reqRate.observe(p.Elapsed, p.RequestsPerSec)
		m.tokRate = m.tokRate.observe(p.Elapsed, p.OutputTokensPerSec)
		m.inFlight = m.inFlight.observe(p.Elapsed, float64(p.InFlight))
		busy, kv := math.NaN(), math.NaN()
		if p.ScrapeOK > 0 && p.Server.HasRunning {
			busy = p.Server.Running + p.Server.Waiting // Waiting is 0 when not exposed
		}
		if p.ScrapeOK > 0 && p.Server.HasKV {
			kv = p.Server.KVUsage
		}
		m.engineBusy = m.engineBusy.observe(p.Elapsed, busy)
		m.kv = m.kv.observe(p.Elapsed, kv)
		m.sent = m.sent.observe(p.Elapsed, sentPoint{p.Elapsed, p.Sent})
		m.warns = m.warns.observe(p.Elapsed, p.Findings)
	case tea.WindowSizeMsg:
		if msg.Width > 0 && msg.Height > 0 {
			m.width, m.height = msg.Width, msg.Height
		}
	case tea.KeyPressMsg:
		// A held key repeats; only deliberate presses count towards "abort".
		if msg.IsRepeat || m.ended {
			break
		}
		switch key := msg.String(); key {
		case "ctrl+c", "q":
			m.interrupts++
			return m, m.interruptCmd()
		case "?":
			m.help = !m.help
		case "esc":
			m.help = false
		case "tab", "right", "l":
			m.pane = (m.pane + 1) % paneCount
			m.help = false
		case "shift+tab", "left", "h":
			m.pane = (m.pane + paneCount - 1) % paneCount
			m.help = false
		case "1", "2", "3", "4":
			m.pane = pane(key[0] - '1')
			m.help = false
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

// history is a fixed ring of per-second rate points.
type history = ring[float64]

// ring keeps one point per second of run time, the newest historyLen of
// them. An array, not a slice, so copies of the model never share it.
type ring[T any] struct {
	points  [historyLen]T
	n       int   // points held, at most historyLen
	next    int   // ring index the next point goes to
	lastSec int64 // run-time second of the newest point
}

// observe folds one sample in: a sample in a new second of run time adds a
// point, one in the same second replaces the newest point, so the sparkline
// advances with run time, whatever the sampling rate.
func (h ring[T]) observe(elapsed time.Duration, v T) ring[T] {
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
func (h ring[T]) latest(k int) []T {
	k = max(0, min(k, h.n))
	out := make([]T, k)
	for i := range k {
		out[i] = h.points[(h.next-k+i+2*historyLen)%historyLen]
	}
	return out
}
