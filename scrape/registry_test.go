package scrape

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engines"
)

// TestEveryFamilyHasADialect: each engine family's dialect file registered
// a mapping under the family's name, and only families have one.
func TestEveryFamilyHasADialect(t *testing.T) {
	t.Parallel()
	ds, err := dialects()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(engines.Names()) {
		t.Errorf("%d dialects for %d families", len(ds), len(engines.Names()))
	}
	for i, name := range engines.Names() {
		d, err := DialectFor(name)
		if err != nil || d.Name() != name || ds[i].Name() != name {
			t.Errorf("family %s: DialectFor = %v, %v; position %d holds %s", name, d, err, i, ds[i].Name())
		}
	}
}

// fakeTable is a dialect file of a family a test adds.
var fakeTable = tableDialect{
	name:     "fakeengine",
	prefixes: []string{"fake:"},
	rules:    []rule{{concept: RequestsRunning, names: []string{"fake:running"}}},
}

// TestRegisterDialect is not parallel: it changes the registries.
func TestRegisterDialect(t *testing.T) {
	if _, err := RegisterDialect(fakeTable); err == nil || !strings.Contains(err.Error(), "no engine family") {
		t.Errorf("a dialect without a family: %v", err)
	}
	f, _ := engines.Lookup(engines.TGI)
	f.Name = "fakeengine"
	undoFamily, err := engines.Register(f)
	if err != nil {
		t.Fatal(err)
	}
	defer undoFamily()
	// A family without a dialect file is named, not skipped.
	if _, err := DialectFor("fakeengine"); err == nil || !strings.Contains(err.Error(), "has no metrics dialect") {
		t.Errorf("DialectFor a family without a dialect: %v", err)
	}
	if _, err := MetricNamePattern(""); err == nil || !strings.Contains(err.Error(), "fakeengine") {
		t.Errorf("MetricNamePattern with a family lacking a dialect: %v", err)
	}
	undo, err := RegisterDialect(fakeTable)
	if err != nil {
		t.Fatal(err)
	}
	defer undo()
	if _, err := RegisterDialect(fakeTable); err == nil {
		t.Error("a dialect registered twice")
	}
	fams, err := Parse([]byte("# TYPE fake:running gauge\nfake:running 3\n"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	d := Detect(fams)
	if d == nil || d.Name() != "fakeengine" || d.Map(fams).Gauges[RequestsRunning] != 3 {
		t.Errorf("Detect = %v: want the fake family's dialect, mapping its gauge", d)
	}
	if p, err := MetricNamePattern(""); err != nil || !strings.Contains(p, `fake:.+`) {
		t.Errorf("MetricNamePattern = %q, %v: want the fake prefix", p, err)
	}
}
