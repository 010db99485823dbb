package run

import (
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// The child engine must get exactly the scenario's values: the flags it is
// given, applied to the preset, give back the scenario's parameters.
func TestOverrideFlagsRoundTrip(t *testing.T) {
	t.Parallel()
	preset, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	want := preset
	want.MaxRunningRequests = 7
	want.DecodeBase = 3500 * time.Microsecond
	want.PrefixCache = !preset.PrefixCache
	flags, err := overrideFlags("--param", want, preset)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 6 {
		t.Errorf("flags %q: want only the 3 changed parameters", flags)
	}
	var kvs []string
	for i := 1; i < len(flags); i += 2 {
		kvs = append(kvs, flags[i])
	}
	got, err := sim.WithParamOverrides(preset, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("round trip through %q:\n got %+v\nwant %+v", kvs, got, want)
	}

	faults := sim.Faults{ErrorRate: 0.25, ErrorStatuses: []int{429, 503}, StallFor: 2 * time.Second, StallRate: 0.1}
	ff, err := overrideFlags("--fault", faults, sim.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	kvs = kvs[:0]
	for i := 1; i < len(ff); i += 2 {
		kvs = append(kvs, ff[i])
	}
	gotF, err := sim.WithFaultOverrides(sim.Faults{}, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if gotF.ErrorRate != faults.ErrorRate || !slices.Equal(gotF.ErrorStatuses, faults.ErrorStatuses) || gotF.StallFor != faults.StallFor || gotF.StallRate != faults.StallRate {
		t.Errorf("faults round trip through %q: got %+v", kvs, gotF)
	}
}
