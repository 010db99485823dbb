package run

import (
	"slices"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/scrape"
)

// Every engine family a scenario may name is known to every component that
// reads it: scrape maps its metrics, the client knows its id field, and the
// built-in engine speaks exactly the families marked Sim. A name one of
// them lacks would validate and then fail mid-run.
func TestDialectsAgree(t *testing.T) {
	t.Parallel()
	if got := scrape.DialectNames(); !slices.Equal(got, engines.Names()) {
		t.Errorf("scrape knows %v, the registry holds %v", got, engines.Names())
	}
	for _, d := range engines.Names() {
		if _, err := client.IDField(d); err != nil {
			t.Errorf("client: %v", err)
		}
		if _, err := scrape.DialectFor(d); err != nil {
			t.Errorf("scrape: %v", err)
		}
	}
	if !slices.Equal(sim.Dialects, engines.Simulated()) {
		t.Errorf("the built-in engine speaks %v, the registry says %v", sim.Dialects, engines.Simulated())
	}
}
