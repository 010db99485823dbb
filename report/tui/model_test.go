package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

var (
	keyCtrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	keyQ     = tea.KeyPressMsg{Code: 'q', Text: "q"}
)

// step feeds msgs through Update in order, running every returned command
// the way the program would (off the loop, here inline) and collecting the
// messages they produce.
func step(t *testing.T, m model, msgs ...tea.Msg) (model, []tea.Msg) {
	t.Helper()
	var produced []tea.Msg
	for _, msg := range msgs {
		next, cmd := m.Update(msg)
		m = next.(model)
		if cmd != nil {
			if out := cmd(); out != nil {
				produced = append(produced, out)
			}
		}
	}
	return m, produced
}

func TestKeysCallInterrupt(t *testing.T) {
	t.Parallel()
	repeat := keyCtrlC
	repeat.IsRepeat = true
	cases := []struct {
		name   string
		keys   []tea.Msg
		calls  int
		footer string
	}{
		{"no key", nil, 0, "Ctrl-C or q: stop arrivals and drain · again: abort · ?: keys"},
		{"ctrl+c once drains", []tea.Msg{keyCtrlC}, 1, "draining… 7 in flight · Ctrl-C or q again: abort"},
		{"q is ctrl+c", []tea.Msg{keyQ}, 1, "draining…"},
		{"twice aborts", []tea.Msg{keyCtrlC, keyQ}, 2, "aborting…"},
		{"every press is forwarded", []tea.Msg{keyCtrlC, keyCtrlC, keyCtrlC}, 3, "aborting…"},
		{"held key counts once", []tea.Msg{keyCtrlC, repeat, repeat}, 1, "draining…"},
		{"other keys do nothing", []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "x"}, tea.KeyPressMsg{Code: tea.KeyEnter}}, 0, "Ctrl-C or q: stop"},
		{"key release is not a press", []tea.Msg{tea.KeyReleaseMsg{Code: 'c', Mod: tea.ModCtrl}}, 0, "Ctrl-C or q: stop"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			m := newModel(Header{Scenario: "s"}, func() { calls++ })
			m, _ = step(t, m, sampleMsg{live.Progress{InFlight: 7}})
			m, _ = step(t, m, c.keys...)
			if calls != c.calls {
				t.Errorf("interrupt called %d times, want %d", calls, c.calls)
			}
			if got := lastLine(m.render()); !strings.HasPrefix(got, c.footer) {
				t.Errorf("footer = %q, want prefix %q", got, c.footer)
			}
		})
	}
}

func TestInterruptWithoutCallback(t *testing.T) {
	t.Parallel()
	m := newModel(Header{}, nil)
	next, cmd := m.Update(keyCtrlC)
	if cmd != nil {
		t.Errorf("Update returned a command with no interrupt callback")
	}
	if got := lastLine(next.(model).render()); !strings.HasPrefix(got, "draining…") {
		t.Errorf("footer = %q, want draining…", got)
	}
}

func TestEndQuitsAndIgnoresKeys(t *testing.T) {
	t.Parallel()
	calls := 0
	m := newModel(Header{}, func() { calls++ })
	next, cmd := m.Update(endMsg{})
	m = next.(model)
	if cmd == nil {
		t.Fatal("endMsg returned no command, want tea.Quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("endMsg command produced %T, want tea.QuitMsg", cmd())
	}
	m, _ = step(t, m, keyCtrlC)
	if calls != 0 {
		t.Errorf("a key after the end called interrupt %d times", calls)
	}
	if got := lastLine(m.render()); got != "run done" {
		t.Errorf("footer = %q, want %q", got, "run done")
	}
}

func TestSampleReplacesProgress(t *testing.T) {
	t.Parallel()
	m := newModel(Header{}, nil)
	first := live.Progress{Phase: "warmup", Sent: 1}
	second := live.Progress{Phase: "steady", Sent: 9, Elapsed: 3 * time.Second}
	m, _ = step(t, m, sampleMsg{first}, sampleMsg{second})
	if m.last.Phase != "steady" || m.last.Sent != 9 {
		t.Errorf("last = %+v, want the second sample", m.last)
	}
	if !strings.Contains(ansi.Strip(m.render()), "phase steady   elapsed 00:03") {
		t.Errorf("view does not show the latest phase and elapsed:\n%s", ansi.Strip(m.render()))
	}
}

func TestWindowSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msg  tea.WindowSizeMsg
		w, h int
	}{
		{"resize", tea.WindowSizeMsg{Width: 120, Height: 40}, 120, 40},
		{"shrink", tea.WindowSizeMsg{Width: 50, Height: 10}, 50, 10},
		{"zero is ignored", tea.WindowSizeMsg{Width: 0, Height: 0}, defaultWidth, defaultHeight},
		{"negative is ignored", tea.WindowSizeMsg{Width: -3, Height: 20}, defaultWidth, defaultHeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, _ := step(t, newModel(Header{}, nil), c.msg)
			if m.width != c.w || m.height != c.h {
				t.Errorf("size = %d×%d, want %d×%d", m.width, m.height, c.w, c.h)
			}
		})
	}
}

func TestHistoryOnePointPerSecond(t *testing.T) {
	t.Parallel()
	type obs struct {
		at time.Duration
		v  float64
	}
	cases := []struct {
		name string
		obs  []obs
		want []float64
	}{
		{"empty", nil, []float64{}},
		{"same second keeps the newest", []obs{{0, 1}, {250 * time.Millisecond, 2}, {750 * time.Millisecond, 3}}, []float64{3}},
		{"new seconds append", []obs{{0, 1}, {time.Second, 2}, {2500 * time.Millisecond, 3}}, []float64{1, 2, 3}},
		{"a gap adds one point", []obs{{0, 1}, {5 * time.Second, 2}}, []float64{1, 2}},
		{"time going back replaces", []obs{{2 * time.Second, 1}, {time.Second, 5}}, []float64{5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var h history
			for _, o := range c.obs {
				h = h.observe(o.at, o.v)
			}
			if got := h.latest(100); !slices.Equal(got, c.want) {
				t.Errorf("latest = %v, want %v", got, c.want)
			}
		})
	}
}

func TestHistoryWrapsAndIsBounded(t *testing.T) {
	t.Parallel()
	var h history
	total := historyLen + 30
	for i := range total {
		h = h.observe(time.Duration(i)*time.Second, float64(i))
	}
	all := h.latest(1000)
	if len(all) != historyLen {
		t.Fatalf("kept %d points, want %d", len(all), historyLen)
	}
	for i, v := range all {
		if want := float64(total - historyLen + i); v != want {
			t.Fatalf("point %d = %v, want %v (oldest first)", i, v, want)
		}
	}
	if got, want := h.latest(3), []float64{float64(total - 3), float64(total - 2), float64(total - 1)}; !slices.Equal(got, want) {
		t.Errorf("latest(3) = %v, want %v", got, want)
	}
	if got := h.latest(-1); len(got) != 0 {
		t.Errorf("latest(-1) = %v, want none", got)
	}
}

func TestHistoryIsNotSharedBetweenModels(t *testing.T) {
	t.Parallel()
	m, _ := step(t, newModel(Header{}, nil), sampleMsg{live.Progress{RequestsPerSec: 1}})
	before := m
	m, _ = step(t, m, sampleMsg{live.Progress{Elapsed: time.Second, RequestsPerSec: 2}})
	if got := before.reqRate.latest(10); !slices.Equal(got, []float64{1}) {
		t.Errorf("an earlier model's history changed to %v", got)
	}
	if got := m.reqRate.latest(10); !slices.Equal(got, []float64{1, 2}) {
		t.Errorf("history = %v, want [1 2]", got)
	}
}

func lastLine(s string) string {
	s = ansi.Strip(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

func keyPress(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

func TestKeysSwitchPanesAndHelp(t *testing.T) {
	t.Parallel()
	shiftTab := tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	cases := []struct {
		name string
		keys []tea.Msg
		pane pane
		help bool
	}{
		{"starts on load", nil, paneLoad, false},
		{"? shows help", []tea.Msg{keyPress('?')}, paneLoad, true},
		{"? again hides it", []tea.Msg{keyPress('?'), keyPress('?')}, paneLoad, false},
		{"esc hides it", []tea.Msg{keyPress('?'), tea.KeyPressMsg{Code: tea.KeyEscape}}, paneLoad, false},
		{"tab moves on", []tea.Msg{tea.KeyPressMsg{Code: tea.KeyTab}}, paneFindings, false},
		{"tab wraps", []tea.Msg{tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab}}, paneLoad, false},
		{"shift+tab goes back and wraps", []tea.Msg{shiftTab}, paneEngine, false},
		{"digits pick a pane", []tea.Msg{keyPress('3')}, panePhases, false},
		{"a pane key closes help", []tea.Msg{keyPress('?'), keyPress('4')}, paneEngine, false},
		{"a held key repeats nothing", []tea.Msg{tea.KeyPressMsg{Code: tea.KeyTab, IsRepeat: true}}, paneLoad, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			m, _ := step(t, newModel(Header{}, func() { calls++ }), c.keys...)
			if m.pane != c.pane || m.help != c.help {
				t.Errorf("pane %v help %v, want pane %v help %v", m.pane, m.help, c.pane, c.help)
			}
			if calls != 0 {
				t.Errorf("a view key called interrupt %d times", calls)
			}
			view := ansi.Strip(m.render())
			if c.help != strings.Contains(view, "first: stop arrivals, let requests in flight finish") {
				t.Errorf("help shown = %v, want %v:\n%s", !c.help, c.help, view)
			}
			if !c.help && !strings.Contains(view, fmt.Sprintf("[%d %s]", c.pane+1, c.pane)) {
				t.Errorf("the tab of pane %v is not marked:\n%s", c.pane, view)
			}
		})
	}
}

// A warning the live window reports for one sample only stays "new"; once
// it persists for confirmAfter it is raised, and when it goes away, so does
// its age.
func TestTransientWarningIsNotRaised(t *testing.T) {
	t.Parallel()
	warn := []reconcile.Finding{{ID: "foreign_traffic", Severity: "warn", Verdict: "3 foreign requests"}}
	at := func(ms int, fs []reconcile.Finding) tea.Msg {
		return sampleMsg{live.Progress{Elapsed: time.Duration(ms) * time.Millisecond, Findings: fs}}
	}
	m, _ := step(t, newModel(Header{}, nil), at(0, warn))
	if got := ansi.Strip(m.findingsSummary()); got != "1 new (unconfirmed) · none yet" {
		t.Errorf("a first sighting reads %q", got)
	}
	m, _ = step(t, m, at(1000, warn), at(2000, warn))
	if got := ansi.Strip(m.findingsSummary()); got != "1 of 1 checks: WARN 3 foreign requests" {
		t.Errorf("after 2 s it reads %q", got)
	}
	m, _ = step(t, m, at(2250, nil), at(2500, warn))
	if got := ansi.Strip(m.findingsSummary()); !strings.HasPrefix(got, "1 new") {
		t.Errorf("after a gap it reads %q, want new again", got)
	}
}

// Progress by request count: the ETA comes from the send rate of the last
// seconds' snapshots; once all are sent the row shows the drain, never a bar
// past its end.
func TestProgressByRequestCount(t *testing.T) {
	t.Parallel()
	m := newModel(Header{PlannedRequests: 100}, nil)
	for s := range 5 {
		m, _ = step(t, m, sampleMsg{live.Progress{Elapsed: time.Duration(s) * time.Second, Sent: 10 * s, InFlight: 4}})
	}
	row := ansi.Strip(m.progressRow())
	for _, want := range []string{"sent 40 / 100", "40%", "ETA 00:06"} {
		if !strings.Contains(row, want) {
			t.Errorf("progress row %q lacks %q", row, want)
		}
	}
	m, _ = step(t, m, sampleMsg{live.Progress{Elapsed: 11 * time.Second, Sent: 100, InFlight: 4}})
	row = ansi.Strip(m.progressRow())
	if !strings.Contains(row, "draining 4 in flight · all 100 sent") || strings.Contains(row, "%") {
		t.Errorf("progress row after the last send = %q", row)
	}
}
