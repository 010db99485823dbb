package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestExportSinkLaunch: a launched SGLang gets SGLang's export flags, to
// the run directory by default and to the scenario's directory when it
// names one, on a copy of the launch; other kinds and runs without
// scrape.sglang_export get nothing.
func TestExportSinkLaunch(t *testing.T) {
	runDir := t.TempDir()
	for _, tc := range []struct {
		name, kind string
		cfg        *scenarios.SGLangExport
		wantDir    string // "" = no flags
	}{
		{"default dir", launch.KindSGLang, &scenarios.SGLangExport{}, filepath.Join(runDir, rundir.SGLangExportDir)},
		{"own dir", launch.KindSGLang, &scenarios.SGLangExport{Dir: "/var/log/sglang"}, "/var/log/sglang"},
		{"vllm", launch.KindVLLM, &scenarios.SGLangExport{}, ""},
		{"no export", launch.KindSGLang, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc scenarios.Scenario
			sc.Scrape.SGLangExport = tc.cfg
			orig := &scenarios.Launch{Kind: tc.kind, Extra: []string{"--seed", "1"}}
			got := sglangExport(sc, runDir).launchSpec(orig)
			if len(orig.Extra) != 2 {
				t.Fatalf("the scenario's launch was changed: %+v", orig)
			}
			if tc.wantDir == "" {
				if got != orig {
					t.Errorf("got %+v, want the launch as it was", got)
				}
				return
			}
			want := []string{"--seed", "1", "--export-metrics-to-file", "--export-metrics-to-file-dir", tc.wantDir}
			if !slices.Equal(got.Extra, want) {
				t.Errorf("extra %q, want %q", got.Extra, want)
			}
		})
	}
}

// TestExportSinkCollect: from the engine's own directory, the export files
// written during the run are copied into the run directory; older ones and
// other files are not; nothing written is said.
func TestExportSinkCollect(t *testing.T) {
	src, runDir := t.TempDir(), t.TempDir()
	var sc scenarios.Scenario
	sc.Scrape.SGLangExport = &scenarios.SGLangExport{Dir: src}
	x := sglangExport(sc, runDir)
	var log strings.Builder
	if notes := x.collect(&log); len(notes) != 1 || !strings.Contains(notes[0], "no file in "+src) {
		t.Errorf("nothing written: notes %q", notes)
	}
	write := func(name string, mod time.Time) {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(`{"id": "`+name+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write("sglang-request-metrics-20261205_04.log", time.Now())
	write("sglang-request-metrics-20261204_23.log", time.Now().Add(-time.Hour))
	write("other.log", time.Now())
	if notes := x.collect(&log); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	entries, _ := os.ReadDir(filepath.Join(runDir, rundir.SGLangExportDir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"sglang-request-metrics-20261205_04.log"}) {
		t.Errorf("copied %q", names)
	}
	got, err := rundir.ReadSGLangExport(runDir)
	if err != nil || len(got.Records) != 1 || got.Records[0].ID != "sglang-request-metrics-20261205_04.log" {
		t.Errorf("read back %+v, %v", got, err)
	}
}
