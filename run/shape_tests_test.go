package run

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// testImportExceptions are the edges against forbiddenImports that a
// package's tests may take, each with its reason: fixtures on the same floor
// (the built-in engine as the loopback server, the scenario files as input),
// never a package built on the one under test (TestTestImportShape refuses
// those whatever this list says). Keys are "package -> import", paths inside
// the module. An entry no test takes any more fails the test, so the list
// cannot outlive its reasons.
var testImportExceptions = map[string]string{
	"calibrate -> engine/sim":       "the built-in engine is the loopback server calibration is measured against",
	"calibrate -> scenarios":        "a scenario's plan is calibrated end to end against the built-in engine",
	"client -> scrape":              "the client's server-id fields are checked against every scrape dialect, until one registry of engine families holds both",
	"scenarios -> engine/sim":       "a scenario's engine section decodes into the built-in engine's parameters and presets",
	"scrape -> engine/sim":          "the built-in engine is the loopback server whose /metrics is scraped",
	"workload -> client":            "end to end: the driver sends through the real client (an external test package, so workload itself never imports it)",
	"workload -> engine/sim":        "end to end: the built-in engine is the loopback server the driver's plans run against",
	"workload -> report/saturation": "the saturation detector (which imports nothing of workload's) judges a real sweep's phases; the test belongs in run once the end-to-end helper lives in internal/testkit",
}

// TestTestImportShape holds the packages' tests to the layering their code
// keeps (forbiddenImports, and only the command uses run), and forbids any
// test scaffolding that points back up: a test may not import a package that
// itself depends on the package under test (a report test finalizing through
// run). Scaffolding that needs the upper floors lives in internal/testkit,
// or the test moves up to the package that may import both.
func TestTestImportShape(t *testing.T) {
	t.Parallel()
	const module = "github.com/llmbench-org/llmbench/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps,TestImports,XTestImports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkgInfo struct {
		ImportPath                      string
		Deps, TestImports, XTestImports []string
	}
	var pkgs []pkgInfo
	deps := map[string][]string{} // import path → its non-test dependencies, transitively
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
		deps[p.ImportPath] = p.Deps
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list listed %d packages: is this the module's tree?", len(pkgs))
	}
	taken := map[string]bool{}
	for _, p := range pkgs {
		pkg := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || within(dep, pkg) {
				continue
			}
			if slices.Contains(deps[imp], p.ImportPath) {
				t.Errorf("a test of %s imports %s, which is built on %s: test scaffolding must not point back up", pkg, dep, pkg)
				continue
			}
			if within(dep, "run") && !within(pkg, "cmd") {
				t.Errorf("a test of %s imports %s: only the command uses run", pkg, dep)
			}
			edge := pkg + " -> " + dep
			if why := forbiddenEdge(pkg, dep); why != "" {
				if _, ok := testImportExceptions[edge]; ok {
					taken[edge] = true
					continue
				}
				t.Errorf("a test of %s imports %s: %s, in its tests either", pkg, dep, why)
			}
		}
	}
	for edge := range testImportExceptions {
		if !taken[edge] {
			t.Errorf("testImportExceptions allows %s, which no test takes against forbiddenImports any more: remove the entry", edge)
		}
	}
}
