package race

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestEnabledMatchesThePool checks Enabled against something only the race
// detector changes: sync.Pool under -race drops a quarter of the objects put
// back (about 250 of 1000), where a normal build keeps what one goroutine put
// (the collector is off meanwhile; the goroutine moving to another P now and
// then can cost a few).
func TestEnabledMatchesThePool(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var p sync.Pool
	made := 0
	p.New = func() any { made++; return new([64]byte) }
	for range 1000 {
		p.Put(p.Get())
	}
	if dropped := made > 100; dropped != Enabled {
		t.Errorf("Enabled = %v, yet the pool made %d objects for 1000 get-put pairs", Enabled, made)
	}
}
