package rundir

import (
	"path/filepath"

	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// SGLangExportDir holds SGLang's per-request export files
// (sglang-request-metrics-YYYYMMDD_HH.log) when the scenario reads them
// (scrape.sglang_export): written there by the engine, or copied there
// from the engine's directory at the end of the run.
const SGLangExportDir = "sglang-export"

// ReadSGLangExport reads a run directory's SGLang export; a run without
// one has none.
func ReadSGLangExport(dir string) (sglangexport.Log, error) {
	return sglangexport.ReadDir(filepath.Join(dir, SGLangExportDir))
}
