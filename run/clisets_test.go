package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/textwidth"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// fakeTrialSet writes a trial set of n trials whose run directories hold
// only an empty run.json: enough for every check that refuses a set before
// reading a run.
func fakeTrialSet(t *testing.T, n int) string {
	t.Helper()
	set := t.TempDir()
	var names []string
	for i := range n {
		name := "trial-" + string(rune('1'+i))
		if err := os.Mkdir(filepath.Join(set, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(set, name, rundir.RunFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rundir.WriteTrials(set, names); err != nil {
		t.Fatal(err)
	}
	return set
}

// isConfigError: the user's to fix, exit 2 at the command line.
func isConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// Inspect reads an engine's /metrics: a run directory or a trial set given
// for an exposition file is refused, naming what it is and what to use,
// and so is an unknown dialect.
func TestInspectRefuses(t *testing.T) {
	t.Parallel()
	set := fakeTrialSet(t, 2)
	for _, tt := range []struct{ target, dialect, want string }{
		{set, "", "is a trial set of 2 trials (trial-1, trial-2): inspect reads an engine's /metrics"},
		{filepath.Join(set, "trial-1"), "", "is a run directory: inspect reads an engine's /metrics"},
		{"metrics.txt", "no-such-dialect", "no-such-dialect"},
	} {
		_, err := Inspect(context.Background(), tt.target, tt.dialect, nil)
		if !isConfigError(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Inspect(%s, %q): %v; want a *ConfigError with %q", tt.target, tt.dialect, err, tt.want)
		}
	}
}

// Report refuses what it cannot print before it rebuilds anything: a path
// that is not a run, a format it does not know, and for a trial set the
// formats that describe one run (naming the trials).
func TestReportRefuses(t *testing.T) {
	t.Parallel()
	set := fakeTrialSet(t, 2)
	for _, tt := range []struct {
		dir, format, want string
		width             int
	}{
		{t.TempDir(), "text", "is not a run directory", 0},
		{filepath.Join(set, "trial-1"), "text", "--width 59: at least 60 columns", 59},
		{filepath.Join(set, "trial-1"), "xml", `--format must be text, json, md, csv, html or parquet, not "xml"`, 0},
		{set, "xml", `--format must be text, json, md, csv, html or parquet, not "xml"`, 0},
		{set, "json", "is a trial set of 2 trials (trial-1, trial-2): --format json describes one run; give one trial, e.g. llmbench report " + filepath.Join(set, "trial-1") + " --format json", 0},
		{set, "csv", "--format csv describes one run", 0},
	} {
		var out strings.Builder
		err := Report(tt.dir, ReportOptions{Format: tt.format, Width: tt.width}, &out)
		if !isConfigError(err) || !strings.Contains(err.Error(), tt.want) || out.Len() > 0 {
			t.Errorf("Report(%s, %s): %v, printed %q; want a *ConfigError with %q and nothing printed", tt.dir, tt.format, err, out.String(), tt.want)
		}
	}
}

// Merge refuses the trials of a trial set as shards, whether the set is
// named or found below a directory given, before merging anything.
func TestMergeRefusesTrials(t *testing.T) {
	t.Parallel()
	set := fakeTrialSet(t, 3)
	parent := filepath.Dir(set)
	for _, shards := range [][]string{{set}, {filepath.Join(set, "trial-1"), filepath.Join(set, "trial-2")}, {parent}} {
		out := filepath.Join(t.TempDir(), "merged")
		err := Merge(out, shards, nil)
		if !isConfigError(err) || !strings.Contains(err.Error(), "of 3 trials (trial-1, trial-2, trial-3), not the shards of one run") {
			t.Errorf("Merge(%v): %v", shards, err)
		}
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Errorf("Merge(%v) wrote %s", shards, out)
		}
	}
}

// The two-stage stop: the first interrupt closes Stop, the second aborts,
// a third does nothing; each is said only when asked to be.
func TestInterrupter(t *testing.T) {
	t.Parallel()
	for _, say := range []bool{true, false} {
		aborted := 0
		var log strings.Builder
		i := NewInterrupter(func() { aborted++ }, &log, say)
		if closed(i.Stop()) || aborted != 0 {
			t.Fatal("stopped before any interrupt")
		}
		i.Interrupt()
		if !closed(i.Stop()) || aborted != 0 {
			t.Errorf("first interrupt: stop closed %v, aborted %d; want closed, 0", closed(i.Stop()), aborted)
		}
		i.Interrupt()
		i.Interrupt()
		if aborted != 1 {
			t.Errorf("after three interrupts aborted %d times, want 1", aborted)
		}
		said := strings.Contains(log.String(), "stopping arrivals") && strings.Contains(log.String(), "aborting in-flight requests")
		if said != say || (!say && log.Len() > 0) {
			t.Errorf("say=%v printed %q", say, log.String())
		}
	}
}

// Forward turns each signal into an interrupt and returns when its
// channel closes.
func TestInterrupterForward(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 2)
	sigs <- os.Interrupt
	sigs <- os.Interrupt
	close(sigs)
	aborted := false
	i := NewInterrupter(func() { aborted = true }, nil, false)
	i.Forward(context.Background(), sigs)
	if !closed(i.Stop()) || !aborted {
		t.Errorf("two signals: stop closed %v, aborted %v", closed(i.Stop()), aborted)
	}
}

func TestLiveName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		l    Live
		want string
	}{
		{Live{Scenario: "chat"}, "chat"},
		{Live{Scenario: "chat", Trial: "B: trial 2 of 3"}, "chat (B: trial 2 of 3)"},
	} {
		if got := tt.l.Name(); got != tt.want {
			t.Errorf("%+v.Name() = %q, want %q", tt.l, got, tt.want)
		}
	}
}

// LearnNoise refuses before it runs anything: no pair to run, or no noise
// file to write (none given, and no environment to find the default in).
func TestLearnNoiseRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  NoiseConfig
		want string
	}{
		{NoiseConfig{Scenario: "x.yaml", Pairs: 0, Out: "n.json"}, "--pairs must be at least 1"},
		{NoiseConfig{Scenario: "x.yaml", Pairs: 1}, "no noise file: give --out"},
	} {
		var out strings.Builder
		_, err := LearnNoise(context.Background(), tt.cfg, IO{Stdout: &out})
		if !isConfigError(err) || !strings.Contains(err.Error(), tt.want) || out.Len() > 0 {
			t.Errorf("%+v: %v, printed %q; want a *ConfigError with %q", tt.cfg, err, out.String(), tt.want)
		}
	}
}

// --width sets the text's width: a real run's summary (report/testdata/v1-run)
// has lines wider than 80 columns at the default width, and none at 80 or at
// the narrowest width allowed.
func TestReportWidth(t *testing.T) {
	t.Parallel()
	widest := func(width int) int {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "report", "testdata", "v1-run"))); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := Report(dir, ReportOptions{Format: "text", Width: width}, &out); err != nil {
			t.Fatal(err)
		}
		w := 0
		for _, l := range strings.Split(out.String(), "\n") {
			w = max(w, textwidth.Len(l))
		}
		return w
	}
	if w := widest(0); w <= 80 || w > report.DefaultTextWidth {
		t.Errorf("default width: widest line %d columns, want 81..%d", w, report.DefaultTextWidth)
	}
	for _, width := range []int{80, minTextWidth} {
		if w := widest(width); w > width {
			t.Errorf("--width %d: a line of %d columns", width, w)
		}
	}
}
