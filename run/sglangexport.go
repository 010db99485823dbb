package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// exportSink is where SGLang's per-request export (scrape.sglang_export,
// decision 2400) is written and where the report reads it: the engine
// writes into the run directory unless the scenario names its own
// directory, whose files written during the run are then copied in at the
// end. The zero one (no scrape.sglang_export) does nothing.
type exportSink struct {
	engineDir string // where the engine writes ("" = no export)
	runDir    string // the run directory's copy (rundir.SGLangExportDir)
	since     time.Time
}

// sglangExport is the scenario's export sink for a run in runDir.
func sglangExport(sc scenarios.Scenario, runDir string) exportSink {
	x := sc.Scrape.SGLangExport
	if x == nil {
		return exportSink{}
	}
	dst := filepath.Join(runDir, rundir.SGLangExportDir)
	if abs, err := filepath.Abs(dst); err == nil {
		dst = abs // a launched engine runs in its own directory
	}
	src := x.Dir
	if src == "" {
		src = dst
	}
	return exportSink{engineDir: src, runDir: dst, since: time.Now()}
}

// simArgs are `llmbench serve`'s flags for the export.
func (x exportSink) simArgs() []string {
	if x.engineDir == "" {
		return nil
	}
	return []string{"--export-metrics-to-file", "--export-metrics-to-file-dir", x.engineDir}
}

// launchSpec is l with SGLang's export flags added for a launched SGLang,
// a copy: the scenario's own is left as it is.
func (x exportSink) launchSpec(l *scenarios.Launch) *scenarios.Launch {
	if x.engineDir == "" || l == nil || l.Kind != launch.KindSGLang {
		return l
	}
	c := *l
	c.Extra = append(slices.Clone(l.Extra), x.simArgs()...)
	return &c
}

// collect copies the export files the engine wrote during the run from its
// own directory into the run directory (nothing to do when it wrote there)
// and says what it could not.
func (x exportSink) collect(log io.Writer) []string {
	if x.engineDir == "" || x.engineDir == x.runDir {
		return nil
	}
	names, err := sglangexport.Files(x.engineDir)
	if err != nil {
		return []string{fmt.Sprintf("sglang export: %v", err)}
	}
	var notes []string
	copied := 0
	for _, name := range names {
		src := filepath.Join(x.engineDir, name)
		// A file last written before the run holds none of its requests
		// (the hour's file is appended to, so one written during it may
		// hold earlier runs' lines too: those join no record, and are
		// counted so).
		if st, err := os.Stat(src); err != nil || st.ModTime().Before(x.since.Add(-time.Second)) {
			continue
		}
		if err := copyFile(src, filepath.Join(x.runDir, name)); err != nil {
			notes = append(notes, fmt.Sprintf("sglang export: %v", err))
			continue
		}
		copied++
	}
	if copied == 0 && len(notes) == 0 {
		notes = append(notes, fmt.Sprintf("sglang export: no file in %s was written during the run (was the engine started with --export-metrics-to-file --export-metrics-to-file-dir %s?)", x.engineDir, x.engineDir))
	}
	for _, n := range notes {
		fmt.Fprintf(log, "llmbench: %s\n", n)
	}
	return notes
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
