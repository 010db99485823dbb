package scenarios

import (
	"path/filepath"

	"github.com/llmbench-org/llmbench/engines"
)

// SGLangExport reads SGLang's per-request metrics export
// (--export-metrics-to-file, one JSON line per finished request) and joins
// it to the records by rid: summary.json's server_timeline when the run has
// no spans (decision 2400).
//
//	scrape:
//	  sglang_export: {}                          # sim, launch: the engine writes into the run directory
//	  sglang_export: {dir: /var/log/sglang}      # where the engine writes (external: required)
//
// The built-in engine (dialect sglang) writes it; a launched SGLang gets
// --export-metrics-to-file --export-metrics-to-file-dir; an external one
// must have been started with them, writing to Dir, which llmbench must be
// able to read: at the end of the run the files written during it are
// copied into the run directory.
type SGLangExport struct {
	// Dir is the directory the engine writes its export files in. Default
	// (sim and launch only): sglang-export/ in the run directory.
	Dir string `yaml:"dir,omitempty"`
}

// validateSGLangExport checks scrape.sglang_export against the engine.
func (s *Scenario) validateSGLangExport(d *decoder) {
	x := s.Scrape.SGLangExport
	if x == nil {
		return
	}
	path := "scrape.sglang_export"
	switch s.Engine.Kind {
	case KindSim:
		if s.Engine.Dialect != engines.SGLang {
			d.failf(path, "the built-in engine writes SGLang's export in dialect %s only, not %q", engines.SGLang, s.Engine.Dialect)
		}
	case KindLaunch:
		if l := s.Engine.Launch; l != nil && l.Kind != engines.SGLang {
			d.failf(path, "a launched %s writes no SGLang export (launch.kind %s does)", l.Kind, engines.SGLang)
		}
	case KindExternal:
		if x.Dir == "" {
			d.failf(joinPath(path, "dir"), "required for an external engine: the directory its --export-metrics-to-file-dir names")
		}
	}
	if x.Dir != "" && !filepath.IsAbs(x.Dir) {
		d.failf(joinPath(path, "dir"), "want an absolute path, got %q", x.Dir)
	}
}
