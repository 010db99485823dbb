package reconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/engines"
)

// TestSemanticsFromTheFamilies: reconciliation reads every engine family's
// facts from its registry entry; an unidentified engine and one recorded by
// a build that knew another family get neutral ones, named as recorded.
func TestSemanticsFromTheFamilies(t *testing.T) {
	t.Parallel()
	for _, f := range engines.All() {
		s := semanticsOf(f.Name)
		if s.name != f.Name || s.display != f.Display || !cmp.Equal(s.Reconcile, f.Reconcile) {
			t.Errorf("semanticsOf(%s) = %+v, want the family's %+v", f.Name, s, f.Reconcile)
		}
	}
	for dialect, display := range map[string]string{"": "the engine", "ollama": "ollama"} {
		s := semanticsOf(dialect)
		if s.name != dialect || s.display != display || !cmp.Equal(s.Reconcile, engines.NeutralReconcile) {
			t.Errorf("semanticsOf(%q) = %+v, want neutral semantics named %q", dialect, s, display)
		}
	}
	if s := semanticsOf(engines.SGLang); !s.LoggedGauges || s.DecodeLogInterval != 40 || s.KVNote == "" || s.display != "SGLang" {
		t.Errorf("SGLang's semantics %+v: want logged gauges every 40 decode steps and its KV note", s)
	}
}
