package run

import (
	"context"
	"fmt"
	"slices"
)

// ABConfig is `llmbench ab`: scenario A against scenario B, or against A
// again with overrides of one side.
type ABConfig struct {
	// Base is side A's run: its scenario, the overrides both sides take
	// (Sets), and the runs directory, Stop, Views and MetricsAddr the pair
	// shares.
	Base Config
	// B is side B's scenario ("" = A's).
	B string
	// SetsA and SetsB override one side only, after Base.Sets.
	SetsA, SetsB []string
	Trials       int // trials of each side
}

// AB runs the two sides of cfg interleaved (Interleave), cfg.Trials trials
// each. With no B scenario and no overrides of one side, both sides run A:
// an A/A pair, whose differences are the noise, and it says so on
// sys.Stderr (unless Interleave refuses the pair's trial count).
func AB(ctx context.Context, cfg ABConfig, sys IO) (PairResult, error) {
	bScenario := cfg.B
	if bScenario == "" {
		bScenario = cfg.Base.Scenario
		if len(cfg.SetsA) == 0 && len(cfg.SetsB) == 0 && cfg.Trials > 0 {
			fmt.Fprintln(sys.withDefaults().Stderr, "llmbench: A/A: no B.yaml and no --set-a or --set-b, so both sides run A: their differences are the noise")
		}
	}
	a, b := cfg.Base, cfg.Base
	a.Sets = slices.Concat(cfg.Base.Sets, cfg.SetsA)
	b.Scenario, b.Sets = bScenario, slices.Concat(cfg.Base.Sets, cfg.SetsB)
	return Interleave(ctx, a, b, cfg.Trials, sys)
}
