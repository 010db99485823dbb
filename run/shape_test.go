package run

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// forbiddenImports()[p] lists what package p (and its subpackages) must
// not import (nor any subpackage of it), except what allowedImports()[p]
// permits: TestImportShape holds the packages' code to it,
// TestTestImportShape (shape_tests_test.go) their tests.
func forbiddenImports() map[string][]string {
	return map[string][]string{
		"client":      {"workload", "scenarios", "report", "run", "engine", "scrape"},
		"workload":    {"client", "report", "run", "engine", "scrape"},
		"scenarios":   {"engine", "workload", "client", "report", "run", "scrape"},
		"report":      {"workload", "run", "engine", "scenarios"},
		"scrape":      {"client", "workload", "report", "run", "engine", "scenarios"},
		"engine":      {"client", "workload", "report", "run", "scenarios", "scrape"},
		"run":         {"cmd"},
		"selfmetrics": {"workload", "report", "run", "engine", "scenarios", "scrape"},
		"calibrate":   {"report", "run", "engine", "scenarios", "scrape"},
		"selfmon":     {"client", "workload", "report", "run", "engine", "scenarios", "scrape"},
		"internal":    {"client", "workload", "report", "run", "engine", "scenarios", "scrape"},
		// The run directory's owner, the redaction policy and the live view
		// sit below run and report: report reads runs through rundir, the
		// TUI shows live's model without report.
		"rundir":     {"report", "run", "live", "engine", "scenarios", "workload", "calibrate"},
		"redact":     {"client", "workload", "scenarios", "report", "run", "engine", "scrape", "rundir", "live", "internal"},
		"live":       {"report", "run", "engine", "scenarios", "workload", "calibrate"},
		"report/tui": {"report/html", "report/gates", "report/comparison", "report/parquet"},
		// The SLO verdict and the capacity search are pure: the run stage
		// feeds them, the report recomputes with them.
		"capacity": {"workload", "report", "run", "engine", "scenarios", "scrape", "live"},
		// importer reads other tools' command lines into scenario files: it
		// writes YAML (its tests load it back with scenarios) and needs
		// nothing of the run.
		"importer": {"client", "workload", "report", "run", "engine", "scrape", "live"},
	}
}

// allowedImports()[p] are the edges a forbidden root still permits: leaves
// of report that hold no report of their own (a digest of chunks, the
// reconciliation checks).
func allowedImports() map[string][]string {
	return map[string][]string{
		"rundir":     {"report/chunkdigest"},
		"live":       {"report/reconcile", "report/chunkdigest", "report/outages"},
		"report/tui": {"report/reconcile", "report/chunkdigest"},
	}
}

// forbiddenEdge says why pkg must not import dep ("" when it may): the
// forbiddenImports table less allowedImports, and the TUI, which shows
// live's model, never imports report's root.
func forbiddenEdge(pkg, dep string) string {
	if within(pkg, "report/tui") && dep == "report" {
		return "the TUI shows live's model, not all of report"
	}
	allowed := allowedImports()
	for root, bad := range forbiddenImports() {
		// internal/testkit serves tests only: it may start an engine;
		// internal/bigrun generates records for tests and benchmarks.
		if !within(pkg, root) || pkg == "internal/testkit" || pkg == "internal/bigrun" {
			continue
		}
		for _, b := range bad {
			// A package may use its own subpackages (engine/launch uses engine).
			if within(dep, b) && !within(dep, root) && !slices.ContainsFunc(allowed[root], func(a string) bool { return within(dep, a) }) {
				return root + " must not depend on " + b
			}
		}
	}
	return ""
}

func within(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// TestImportShape keeps the house's layering (ARCHITECTURE.md): dependencies
// point one way, from the command through run to the leaves, and the leaves
// stay small. It reads `go list` and fails on any forbidden edge.
func TestImportShape(t *testing.T) {
	t.Parallel()
	const module = "github.com/llmbench-org/llmbench/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	// leaves are the registries every other package reads (engine families,
	// endpoints): they, and their tests, import nothing of the module.
	leaves := []string{"engines", "endpoints"}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		pkg := strings.TrimPrefix(p.ImportPath, module)
		switch path.Base(pkg) {
		case "util", "utils", "common", "helpers", "misc":
			t.Errorf("package %s: no util/common/helpers packages; name it for its job", pkg)
		}
		for _, leaf := range leaves {
			if !within(pkg, leaf) {
				continue
			}
			for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				if dep, ok := strings.CutPrefix(imp, module); ok && !within(dep, leaf) {
					t.Errorf("%s imports %s: the registry %s must import nothing of the module", pkg, dep, leaf)
				}
			}
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if within(dep, "run") && !within(pkg, "cmd") {
				t.Errorf("%s imports %s: only the command uses run", pkg, dep)
			}
			if why := forbiddenEdge(pkg, dep); why != "" {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages: is this the module's tree?", seen)
	}
}
