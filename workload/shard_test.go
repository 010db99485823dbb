package workload

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// driveAll runs a plan to its end under a fake clock, each request taking
// 50 ms, and returns what was sent.
func driveAll(t *testing.T, p *Plan) []sent {
	t.Helper()
	var out []sent
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return 50 * time.Millisecond }}
		d := &Driver{Plan: p, Sender: rec, Start: start}
		if _, err := d.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		out = rec.all()
	})
	return out
}

// TestShardsPartitionAnOpenLoop: the shards of an open loop send disjoint
// requests whose intended times interleave into exactly the unsharded
// schedule.
func TestShardsPartitionAnOpenLoop(t *testing.T) {
	t.Parallel()
	const yaml = "name: open\nseed: 3\nengine: {kind: sim}\nworkload: {rate: 20, arrival: poisson, requests: 100}\n"
	whole := driveAll(t, plan(t, yaml))
	type arrival struct {
		index    int
		intended time.Duration
	}
	key := func(s []sent) []arrival {
		var out []arrival
		for _, r := range s {
			out = append(out, arrival{r.Index, r.Intended})
		}
		slices.SortFunc(out, func(a, b arrival) int { return a.index - b.index })
		return out
	}
	var union []sent
	for i := range 3 {
		sp, err := plan(t, yaml).Shard(i, 3)
		if err != nil {
			t.Fatal(err)
		}
		got := driveAll(t, sp)
		if want := []int{34, 33, 33}[i]; len(got) != want {
			t.Errorf("shard %d sent %d requests, want %d", i, len(got), want)
		}
		for _, r := range got {
			if r.Index%3 != i || !strings.HasSuffix(r.ID, "-"+strconv.Itoa(r.Index)) {
				t.Errorf("shard %d sent request %d (%s): not its own", i, r.Index, r.ID)
			}
		}
		union = append(union, got...)
	}
	if a, b := key(union), key(whole); !slices.Equal(a, b) {
		t.Errorf("the shards' arrivals differ from the unsharded schedule:\nshards %v\nwhole  %v", a[:5], b[:5])
	}
}

func TestShardsDealOutUsersAndLimits(t *testing.T) {
	t.Parallel()
	p := plan(t, "name: closed\nengine: {kind: sim}\nworkload: {concurrency: 10, requests: 7}\n")
	for i, want := range []struct{ users, requests int }{{4, 3}, {3, 2}, {3, 2}} {
		sp, err := p.Shard(i, 3)
		if err != nil {
			t.Fatal(err)
		}
		ph := sp.Phases()[0]
		if ph.Concurrency != want.users || ph.Requests != want.requests {
			t.Errorf("shard %d: %d users, %d requests; want %d, %d", i, ph.Concurrency, ph.Requests, want.users, want.requests)
		}
		if si, n := sp.ShardOf(); si != i || n != 3 {
			t.Errorf("ShardOf = %d/%d", si, n)
		}
	}
	if _, err := p.Shard(3, 3); err == nil {
		t.Error("shard 3/3 accepted")
	}
	auto := plan(t, "name: auto\nengine: {kind: sim}\nworkload: {sweep: {auto: {points: 3}}, duration: 1s}\n")
	if _, err := auto.Shard(0, 2); err == nil || !strings.Contains(err.Error(), "automatic sweep") {
		t.Errorf("sharding an automatic sweep: %v, want a refusal naming it", err)
	}
}
