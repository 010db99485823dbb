package reconcile

import "github.com/llmbench-org/llmbench/engines"

// semantics is what reconciliation must know about a dialect's metrics to
// compare them with the client fairly: the engine family's own facts
// (engines.Reconcile, written in the family's file), under its name.
type semantics struct {
	name    string
	display string // how verdicts name the engine
	engines.Reconcile
}

// semanticsOf returns the dialect's semantics, from its engine family. A
// run whose engine was never identified (dialect "") gets neutral ones (one
// ITL observation per chunk, gauges taken as live), as does a run recorded
// by a build that knew a family this one does not: a recorded run cannot be
// refused, so its verdicts name the dialect as recorded and claim nothing
// special about it.
func semanticsOf(dialect string) semantics {
	f, err := engines.Lookup(dialect)
	if err != nil {
		display := dialect
		if dialect == "" {
			display = "the engine"
		}
		return semantics{name: dialect, display: display, Reconcile: engines.NeutralReconcile}
	}
	return semantics{name: f.Name, display: f.Display, Reconcile: f.Reconcile}
}
