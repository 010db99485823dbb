package tui

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/scrape"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// asciiView renders the model's View the way an ASCII-profile terminal gets
// it: colours dropped, attributes (bold, faint) kept.
func asciiView(t *testing.T, m model) string {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
	if _, err := w.WriteString(m.View().Content); err != nil {
		t.Fatalf("downsampling the view: %v", err)
	}
	return buf.String()
}

// busyProgress is a mid-run snapshot at second sec with every field set.
func busyProgress(sec int) live.Progress {
	return live.Progress{
		Phase: "steady", Elapsed: time.Duration(sec)*time.Second + 250*time.Millisecond, Window: 10 * time.Second,
		// Sent, InFlight, Running and Waiting vary by second but read 1234, 16,
		// 14 and 2 at second 64, as the assertions below expect.
		Sent: 19*sec + 18, Finished: 1218, InFlight: 16 + 2*(sec%8) - 2*(sec%4), OK: 1200, Failed: 18,
		Errors:             map[client.ErrorClass]int{client.ErrHTTPStatus: 12, client.ErrTimeout: 6},
		RequestsPerSec:     float64(sec%10) * 4, // a saw tooth from zero, so the sparkline spans its range
		OutputTokensPerSec: float64(sec%10)*800 + float64(sec)*10,
		TTFT:               live.Quantiles{N: 402, Mean: 131 * time.Millisecond, Values: []time.Duration{120 * time.Millisecond, 250 * time.Millisecond, 410 * time.Millisecond}},
		ITLMean:            live.Quantiles{N: 398, Mean: 21900 * time.Microsecond, Values: []time.Duration{21 * time.Millisecond, 30500 * time.Microsecond, 45 * time.Millisecond}},
		E2E:                live.Quantiles{N: 402, Mean: 2320 * time.Millisecond, Values: []time.Duration{2100 * time.Millisecond, 3400 * time.Millisecond, 12300 * time.Millisecond}},
		ScheduleLagMax:     1200 * time.Microsecond,
		Server: live.ServerLive{At: time.Duration(sec-1) * time.Second, Running: float64(14 + sec%8), Waiting: float64(2 + sec%8/2), KVUsage: 0.634 - 0.02*float64(sec%8),
			HasRunning: true, HasWait: true, HasKV: true},
		ScrapeOK: 65, ScrapeFailures: 1,
		LastScrapeErr: `scrape http://127.0.0.1:8000/metrics: Get "http://127.0.0.1:8000/metrics": context deadline exceeded`,
		Findings:      busyFindings(sec),
		Engine:        busyEngine(sec),
	}
}

// busyEngine is the engine's side of the latency table from second 5 on:
// real histograms read the way live reads them, their means 98.0 ms, 20.1 ms
// and 1.87 s, the E2E p99 above the top bucket.
func busyEngine(sec int) live.EngineLatencies {
	if sec < 5 {
		return live.EngineLatencies{}
	}
	read := func(h scrape.Histogram) live.EngineLatency {
		mean, _ := h.Mean()
		e := live.EngineLatency{Has: true, N: h.Count, Mean: time.Duration(mean * float64(time.Second))}
		for _, p := range []float64{50, 90, 99} {
			e.Quantiles = append(e.Quantiles, h.Quantile(p/100))
		}
		return e
	}
	return live.EngineLatencies{
		TTFT: read(scrape.Histogram{Bounds: []float64{0.05, 0.1, 0.25, 0.5, 1}, Cumulative: []float64{40, 300, 390, 398, 400}, Count: 400, Sum: 39.2}),
		ITL:  read(scrape.Histogram{Bounds: []float64{0.01, 0.025, 0.05, 0.1}, Cumulative: []float64{50, 3000, 3900, 3990}, Count: 4000, Sum: 80.4}),
		E2E:  read(scrape.Histogram{Bounds: []float64{1, 2.5, 5, 10}, Cumulative: []float64{50, 300, 380, 390}, Count: 400, Sum: 748}),
	}
}

// busyFindings is the live reconciliation at second sec: the engine's means,
// a warning reported since second 60, and one that flickers for a second.
func busyFindings(sec int) []reconcile.Finding {
	if sec < 5 {
		return nil
	}
	fs := []reconcile.Finding{
		{ID: reconcile.IDRequestConservation, Severity: reconcile.Info, Verdict: "finished requests agree: 402 on both sides"},
		{ID: reconcile.IDTTFTDecomposition, Severity: reconcile.Info, Verdict: "client TTFT 131 ms = engine 98.0 ms +33 ms outside the engine",
			Evidence: map[string]float64{"server_ttft_mean_s": 0.098}},
		{ID: reconcile.IDPerTokenLatency, Severity: reconcile.Info, Verdict: "client ITL 21.9 ms, engine 20.1 ms",
			Evidence: map[string]float64{"server_itl_mean_s": 0.0201}},
	}
	if sec >= 60 {
		fs = append(fs, reconcile.Finding{ID: reconcile.IDConcurrency, Severity: reconcile.Warn, Verdict: "the client keeps 16.0 requests in flight, the engine sees 12.1",
			Evidence: map[string]float64{"server_e2e_mean_s": 1.87}})
	}
	if sec%10 == 4 {
		fs = append(fs, reconcile.Finding{ID: reconcile.IDForeignTraffic, Severity: reconcile.Warn, Verdict: "the engine finished 3 requests the client did not send"})
	}
	return fs
}

// fed returns a model that has seen one sample per second up to sec.
func fed(t *testing.T, m model, sec int) model {
	t.Helper()
	for s := range sec + 1 {
		m, _ = step(t, m, sampleMsg{busyProgress(s)})
	}
	return m
}

var quickstart = Header{Scenario: "quickstart", RunDir: "runs/20260102T150405Z-quickstart", Engine: "vllm-sim", Planned: 2 * time.Minute}

func TestViewGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		model func(t *testing.T) model
	}{
		{"first-frame-80x24", func(t *testing.T) model {
			return newModel(Header{Scenario: "quickstart", RunDir: "runs/x", Engine: "external"}, nil)
		}},
		{"busy-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), tea.WindowSizeMsg{Width: 80, Height: 24})
			return m
		}},
		{"draining-absent-gauges-80x24", func(t *testing.T) model {
			m := fed(t, newModel(Header{Scenario: "sglang-chat", RunDir: "runs/b", Engine: "sglang"}, nil), 30)
			p := busyProgress(31)
			p.Phase = "drain"
			p.Errors = map[client.ErrorClass]int{client.ErrCanceled: 3, client.ErrConnect: 3, client.ErrStreamBroken: 1}
			p.Server = live.ServerLive{At: 29 * time.Second, Running: 3, HasRunning: true}
			m, _ = step(t, m, sampleMsg{p}, keyCtrlC)
			return m
		}},
		{"over-plan-and-scrape-failing-80x24", func(t *testing.T) model {
			m := fed(t, newModel(quickstart, nil), 5)
			p := busyProgress(130)
			p.Failed, p.Errors = 0, nil
			p.ScrapeOK, p.ScrapeFailures = 0, 7
			p.LastScrapeErr = "dial tcp 127.0.0.1:8000: connect: connection refused"
			m, _ = step(t, m, sampleMsg{p})
			return m
		}},
		{"short-terminal-60x12", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 20), tea.WindowSizeMsg{Width: 60, Height: 12})
			return m
		}},
		{"dashboard-160x48", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(Header{Scenario: "quickstart", RunDir: "runs/20260102T150405Z-quickstart", Engine: "sim (sglang) http://127.0.0.1:42837/v1",
				Planned: 2 * time.Minute, Phases: []string{"warmup", "steady", "cooldown"}}, nil), 64), tea.WindowSizeMsg{Width: 160, Height: 48})
			return m
		}},
		{"findings-pane-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), keyPress('2'))
			return m
		}},
		{"help-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), keyPress('?'))
			return m
		}},
		{"by-request-count-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(Header{Scenario: "burst", RunDir: "runs/c", Engine: "vllm", PlannedRequests: 2000}, nil), 64), keyPress('3'))
			return m
		}},
		{"done-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), endMsg{})
			return m
		}},
		{"done-160x48", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(Header{Scenario: "quickstart", RunDir: "runs/20260102T150405Z-quickstart", Engine: "sim (sglang) http://127.0.0.1:42837/v1",
				Planned: 2 * time.Minute, Phases: []string{"warmup", "steady", "cooldown"}}, nil), 64), tea.WindowSizeMsg{Width: 160, Height: 48}, endMsg{})
			return m
		}},
		{"agentic-80x24", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 30), sampleMsg{agenticProgress(31)}) // sessions_test.go
			return m
		}},
		{"wide-terminal-120x30", func(t *testing.T) model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 90), tea.WindowSizeMsg{Width: 120, Height: 30})
			return m
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := asciiView(t, c.model(t))
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden (run with -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("view differs from %s (run with -update to accept)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
			}
		})
	}
}

// TestViewContent states the task's requirements as assertions, so that a
// golden file accepted with -update cannot silently drop one.
func TestViewContent(t *testing.T) {
	t.Parallel()
	busy := ansi.Strip(fed(t, newModel(quickstart, nil), 64).render())
	absent := busyProgress(10)
	absent.Server = live.ServerLive{At: 9 * time.Second, KVUsage: 0, HasKV: false, Running: 0, HasRunning: true}
	cases := []struct {
		name    string
		view    string
		want    []string
		notWant []string
	}{
		{"busy", busy, []string{
			"llmbench · quickstart", "engine vllm-sim", "runs/20260102T150405Z-quickstart",
			"phase steady", "elapsed 01:04 / 02:00", "█░", "54%",
			"sent 1234", "in flight 16", "ok 1200", "failed 18", "http_status 12 · timeout 6",
			"window 10 s", "requests/s", "output tokens/s", "▁", "█",
			"p50", "p90", "p99", "TTFT", "ITL per-req mean", "E2E",
			"120ms", "250ms", "410ms", "21.0ms", "30.5ms", "45.0ms", "2.10s", "3.40s", "12.3s",
			"max schedule lag", "1.20ms",
			"running 14", "waiting 2", "KV cache 63.4%", "1 s ago",
			"mean", "TTFT             client      131ms     120ms     250ms     410ms       402",
			"engine     98.0ms    80.8ms     200ms     438ms       400",
			"ITL per-req mean client     21.9ms", "per token        engine     20.1ms    19.9ms",
			"E2E              client      2.32s", "engine      1.87s     1.90s     4.38s    >10.0s       400", "ETA 00:56",
			"client in flight", "engine run+wait", "14 + 2",
			"WARN the client keeps 16.0", "1 new (unconfirmed) · 1 of 4 checks: WARN",
			"[1 load]", "Ctrl-C or q: stop arrivals and drain · again: abort · ?: keys",
		}, []string{"goodput", "foreign"}},
		{"engine pane", ansi.Strip(func() model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), keyPress('4'))
			return m
		}().render()), []string{"[4 engine]", "running 14 · waiting 2 · KV cache 63.4%",
			"scrapes ok 65 · failed 1 · last error: scrape http://127.0.0.1:8000/metrics"}, nil},
		{"findings pane: warnings first, a flicker marked new", ansi.Strip(func() model {
			m, _ := step(t, fed(t, newModel(quickstart, nil), 64), keyPress('2'))
			return m
		}().render()), []string{"[2 findings]", "WARN concurrency:", "new  foreign_traffic:", "INFO request_conservation"}, nil},
		{"which phase of several", ansi.Strip(func() model {
			m, _ := step(t, newModel(Header{Phases: []string{"warmup", "steady", "cooldown"}}, nil), sampleMsg{busyProgress(10)})
			return m
		}().render()), []string{"phase steady (2 of 3)"}, nil},
		{"goodput", ansi.Strip(func() model {
			p := busyProgress(10)
			p.HasGoodput, p.GoodputPerSec, p.GoodFraction = true, 12.5, 0.85
			m, _ := step(t, newModel(Header{}, nil), sampleMsg{p})
			return m
		}().render()), []string{"goodput/s", "12.5", "85% of finished requests met the SLO"}, []string{"unmeasured", "TTFC"}},
		{"real engines: reasoning, stream:false, no [DONE]", ansi.Strip(func() model {
			p := busyProgress(10)
			p.HasGoodput, p.GoodputPerSec, p.GoodFraction, p.Unmeasured = true, 12.5, 0.85, 4
			p.TTFCDiffers, p.TTFC = true, live.Quantiles{N: 400, Values: []time.Duration{900 * time.Millisecond, 1500 * time.Millisecond, 2 * time.Second}}
			p.NotStreamed, p.StreamsWithoutDone = 4, 7
			m, _ := step(t, newModel(Header{}, nil), sampleMsg{p})
			return m
		}().render()), []string{"(4 unmeasured)", "TTFC (content)", "900ms", "4 not streamed (no TTFT or ITL) · 7 ended without [DONE]"}, nil},
		{"the scenario's percentiles", ansi.Strip(func() model {
			p := busyProgress(10)
			p.Percentiles = []float64{50, 95, 99.9}
			p.TTFT = live.Quantiles{N: 402, Values: []time.Duration{120 * time.Millisecond, 333 * time.Millisecond, 777 * time.Millisecond}}
			m, _ := step(t, newModel(Header{}, nil), sampleMsg{p})
			return m
		}().render()), []string{"p50", "p95", "p99.9", "333ms", "777ms"}, []string{"p90 "}},
		{"the client throttled", ansi.Strip(func() model {
			p := busyProgress(10)
			p.Client = live.ClientLive{Delay: "cpu_throttled", Cores: 2, ThrottledPeriods: 9, Throttled: 610 * time.Millisecond, CPUQuota: 0.2}
			m, _ := step(t, newModel(Header{}, nil), sampleMsg{p})
			return m
		}().render()), []string{"client", "its container's CPU limit (0.2 cores) stopped it 9 times"}, nil},
		{"absent gauges", ansi.Strip(func() model { m, _ := step(t, newModel(Header{}, nil), sampleMsg{absent}); return m }().render()),
			[]string{"running 0", "waiting not exposed", "KV cache not exposed", "elapsed 00:10"},
			[]string{"waiting 0", "KV cache 0", "/ "}},
		{"before any sample", ansi.Strip(newModel(Header{}, nil).render()),
			[]string{"llmbench · —", "phase starting", "elapsed 00:00", "window —", "no successful scrape yet", "none yet"},
			[]string{"errors", "ms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range c.want {
				if !strings.Contains(c.view, s) {
					t.Errorf("view lacks %q:\n%s", s, c.view)
				}
			}
			for _, s := range c.notWant {
				if strings.Contains(c.view, s) {
					t.Errorf("view shows %q:\n%s", s, c.view)
				}
			}
		})
	}
}

// TestViewFitsEverySize checks the layout invariants across sizes, including
// after a resize: no row wider than the terminal, no more rows than it has,
// and the title and footer always kept.
func TestViewFitsEverySize(t *testing.T) {
	t.Parallel()
	long := Header{Scenario: strings.Repeat("long-scenario-", 10), RunDir: strings.Repeat("/deep/dir", 20),
		Engine: "vllm-sim 日本語エンジン", Planned: time.Minute}
	base := fed(t, newModel(long, nil), 40)
	for _, w := range []int{1, 10, 30, 40, 60, 80, 81, 100, 200} {
		for _, h := range []int{1, 3, 8, 12, 20, 24, 50} {
			m, _ := step(t, base, tea.WindowSizeMsg{Width: w, Height: h})
			checkFits(t, m, w, h)
			lines := strings.Split(ansi.Strip(m.render()), "\n")
			if h >= 2 && !strings.HasPrefix(lines[0], "llmbench") && w >= 8 {
				t.Errorf("%d×%d: first row %q is not the title", w, h, lines[0])
			}
			if h >= 2 && w >= 20 && !strings.HasPrefix(lines[len(lines)-1], "Ctrl-C") {
				t.Errorf("%d×%d: last row %q is not the footer", w, h, lines[len(lines)-1])
			}
		}
	}
}

// checkFits asserts the frame fits the alternate screen: at most h rows
// (no trailing newline, which would scroll it), none wider than w.
func checkFits(t *testing.T, m model, w, h int) {
	t.Helper()
	v := m.View()
	if !v.AltScreen {
		t.Errorf("%d×%d: the view is not on the alternate screen", w, h)
	}
	if strings.HasSuffix(v.Content, "\n") {
		t.Errorf("%d×%d: the view ends in a newline, which scrolls the alternate screen", w, h)
	}
	lines := strings.Split(v.Content, "\n")
	if len(lines) > max(1, h) {
		t.Errorf("%d×%d: %d rows", w, h, len(lines))
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Errorf("%d×%d: row %d is %d cells wide: %q", w, h, i, got, ansi.Strip(l))
		}
	}
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, got, want string
	}{
		{"zero", latency(0), "0"},
		{"ns", latency(800 * time.Nanosecond), "800ns"},
		{"µs", latency(812 * time.Microsecond), "812µs"},
		{"ms 3 digits small", latency(1234 * time.Microsecond), "1.23ms"},
		{"ms tens", latency(12345 * time.Microsecond), "12.3ms"},
		{"ms hundreds", latency(123456 * time.Microsecond), "123ms"},
		{"s", latency(2346 * time.Millisecond), "2.35s"},
		{"s tens", latency(23450 * time.Millisecond), "23.4s"},
		{"minutes", latency(100*time.Second + 400*time.Millisecond), "1m40s"},
		{"clock", clock(65 * time.Second), "01:05"},
		{"clock truncates", clock(65*time.Second + 999*time.Millisecond), "01:05"},
		{"clock hours", clock(3*time.Hour + 4*time.Minute + 5*time.Second), "3:04:05"},
		{"clock negative", clock(-time.Second), "00:00"},
		{"window whole", seconds(10 * time.Second), "10 s"},
		{"window fraction", seconds(2500 * time.Millisecond), "2.5 s"},
		{"window unknown", seconds(0), "—"},
		{"gauge whole", number(14), "14"},
		{"gauge fraction", number(2.5), "2.5"},
		{"errors by count then name", errorClasses(map[client.ErrorClass]int{"b": 1, "a": 1, "c": 5, "": 2}), "c 5 · unclassified 2 · a 1 · b 1"},
		{"clean controls", clean("a\tb\nc\x1b[31md\x00"), "a b c?[31md?"},
		{"clean keeps unicode", clean("日本 ✓"), "日本 ✓"},
		{"clean redacts", clean("scrape http://u:pw@e/metrics?token=t failed; Bearer abc"), "scrape http://u:REDACTED@e/metrics?token=REDACTED failed; Bearer REDACTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		points []float64
		want   string
	}{
		{"none", nil, ""},
		{"all zero is a floor", []float64{0, 0, 0}, "▁▁▁"},
		{"scaled to the top", []float64{0, 1, 2, 4, 8}, "▁▂▃▅█"},
		{"flat non-zero is full", []float64{3, 3}, "██"},
		{"negative is a floor", []float64{-1, 1}, "▁█"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := sparkline(c.points); got != c.want {
				t.Errorf("sparkline(%v) = %q, want %q", c.points, got, c.want)
			}
		})
	}
}

// FuzzView feeds arbitrary outside text and sizes through the layout: the
// view must fit and outside text must not reach the terminal as control bytes.
func FuzzView(f *testing.F) {
	f.Add("quickstart", "runs/x", "vllm", "steady", "connection refused", 80, 24)
	f.Add("\x1b[2J", "\r\n", "日本語", "", "\x00\x07\t", 3, 2)
	f.Add(strings.Repeat("é", 90), "", "", "warm\u200bup", "\u202eevil", 200, 5)
	f.Fuzz(func(t *testing.T, scenario, runDir, engine, phase, scrapeErr string, w, h int) {
		w, h = 1+abs(w)%300, 1+abs(h)%100
		m := newModel(Header{Scenario: scenario, RunDir: runDir, Engine: engine, Planned: time.Minute}, nil)
		p := busyProgress(12)
		p.Phase, p.LastScrapeErr = phase, scrapeErr
		p.Errors = map[client.ErrorClass]int{client.ErrorClass(scrapeErr): 1}
		m, _ = step(t, m, sampleMsg{p}, tea.WindowSizeMsg{Width: w, Height: h})
		checkFits(t, m, w, h)
		for _, r := range ansi.Strip(m.View().Content) {
			if r != '\n' && unicode.IsControl(r) {
				t.Fatalf("control rune %U in the view", r)
			}
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestFindingsRow(t *testing.T) {
	t.Parallel()
	info := reconcile.Finding{ID: "a", Severity: reconcile.Info, Verdict: "fine"}
	warn := reconcile.Finding{ID: "b", Severity: reconcile.Warn, Verdict: "foreign traffic: 12 requests"}
	fail := reconcile.Finding{ID: "c", Severity: reconcile.Fail, Verdict: "scrape target dead"}
	tests := []struct {
		name string
		in   []reconcile.Finding
		want string
	}{
		{"none", nil, "none yet"},
		{"all info", []reconcile.Finding{info, info}, "2 checks, client and engine agree"},
		{"a warning", []reconcile.Finding{info, warn}, "1 of 2 checks: WARN foreign traffic: 12 requests"},
		{"failure first", []reconcile.Finding{warn, fail, info}, "2 of 3 checks: FAIL scrape target dead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ansi.Strip(findingsRow(tt.in)); got != tt.want {
				t.Errorf("findingsRow = %q, want %q", got, tt.want)
			}
		})
	}
}
