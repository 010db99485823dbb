package scrape

import (
	"testing"
	"time"
)

// TestNoDeltaAcrossADialectChange: vLLM's finished counter at 20, then
// SGLang's at 1,000 (another engine, with its own past) and 1,010: the
// change is found, and the increase is the 10 SGLang counted since, never
// 1,000 − 20.
func TestNoDeltaAcrossADialectChange(t *testing.T) {
	snap := func(dialect string, fin float64) *Snapshot {
		return &Snapshot{Dialect: dialect, Counters: map[Concept]float64{RequestsFinished: fin}}
	}
	row := func(at int, s *Snapshot) Row {
		return Row{Target: "t", At: time.Duration(at) * time.Second, OK: true, Snapshot: s}
	}
	rows := []Row{
		row(0, snap("vllm", 10)), row(1, snap("vllm", 20)),
		{Target: "t", At: 2 * time.Second, OK: false},
		row(3, &Snapshot{}), // nothing recognised: no evidence either way
		row(4, snap("sglang", 1000)), row(5, snap("sglang", 1010)),
	}
	ch := DialectChanges(rows)
	if len(ch) != 1 || ch[0].From != "vllm" || ch[0].To != "sglang" || ch[0].Last != time.Second || ch[0].At != 4*time.Second {
		t.Fatalf("changes %+v, want one from vllm (last at 1 s) to sglang (at 4 s)", ch)
	}
	d, _ := Increase(rows)
	if got := d.Counters[RequestsFinished]; got != 10 {
		t.Errorf("increase across the change %v, want 10 (SGLang's since its first scrape)", got)
	}
	if d := Delta(*rows[1].Snapshot, *rows[4].Snapshot); d.Counters[RequestsFinished] != 0 || d.Dialect != "sglang" {
		t.Errorf("Delta across the change: %v finished in %q, want 0 in sglang", d.Counters[RequestsFinished], d.Dialect)
	}
	if got := DialectChanges(rows[:2]); len(got) != 0 {
		t.Errorf("changes within one dialect: %+v", got)
	}
}
