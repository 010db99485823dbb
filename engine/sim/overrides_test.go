package sim

import (
	"testing"
	"time"
)

func TestOverrides(t *testing.T) {
	t.Parallel()
	base, _ := Preset("tiny")
	p, err := WithParamOverrides(base, []string{"decode_base=7ms", "prefix_cache=false", "max_running_requests=3"})
	if err != nil {
		t.Fatal(err)
	}
	if p.DecodeBase != 7*time.Millisecond || p.PrefixCache || p.MaxRunningRequests != 3 || p.KVBlocks != base.KVBlocks {
		t.Errorf("overridden params = %+v", p)
	}
	for _, bad := range [][]string{{"nope=1"}, {"decode_base=fast"}, {"max_running_requests"}, {"=3"}} {
		if _, err := WithParamOverrides(base, bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	f, err := WithFaultOverrides(Faults{}, []string{"error_rate=0.5", "error_statuses=[429, 503]", "stall_for=1s"})
	if err != nil {
		t.Fatal(err)
	}
	if f.ErrorRate != 0.5 || len(f.ErrorStatuses) != 2 || f.StallFor != time.Second {
		t.Errorf("faults = %+v", f)
	}
}

func FuzzOverrides(f *testing.F) {
	f.Add("decode_base=4ms")
	f.Add("error_statuses=[429,500]")
	f.Add("kv_blocks=: [")
	f.Fuzz(func(t *testing.T, kv string) {
		base, _ := Preset("tiny")
		p, err := WithParamOverrides(base, []string{kv})
		if err == nil {
			_ = p.Validate() // must not panic
		}
		_, _ = WithFaultOverrides(Faults{}, []string{kv})
	})
}
