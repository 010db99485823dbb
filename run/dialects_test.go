package run

import (
	"slices"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
)

// Every dialect a scenario may name is known to every component that reads
// it: scrape maps its metrics, the client knows its id field, and the
// built-in engine speaks the ones scenarios says it speaks. A name one of
// them lacks would validate and then fail mid-run.
func TestDialectsAgree(t *testing.T) {
	t.Parallel()
	if got := scrape.DialectNames(); !slices.Equal(got, scenarios.Dialects) {
		t.Errorf("scrape knows %v, scenarios accepts %v", got, scenarios.Dialects)
	}
	for _, d := range scenarios.Dialects {
		if _, err := client.IDField(d); err != nil {
			t.Errorf("client: %v", err)
		}
	}
	if !slices.Equal(sim.Dialects, scenarios.SimDialects) {
		t.Errorf("the built-in engine speaks %v, scenarios says %v", sim.Dialects, scenarios.SimDialects)
	}
}
