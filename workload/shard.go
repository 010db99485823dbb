package workload

import (
	"fmt"
	"time"
)

// Shard returns the part of the plan that shard i of n sends, so n load
// generators on n machines, each running the same scenario and seed, send
// disjoint requests that together are the whole plan (ARCHITECTURE.md, "Scale
// beyond one machine"):
//   - open loop: shard i sends arrivals i, i+n, i+2n, … of each phase's
//     schedule, at their planned times, so the shards' arrivals interleave into
//     exactly the unsharded schedule;
//   - closed loop: the users are dealt out, shard i running every n-th one
//     (ramps likewise);
//   - request counts, concurrency caps and users are shared the same way;
//   - request i of the plan is sent by the shard with i ≡ shard (mod n), so
//     ids never collide and the records merge without renumbering.
//
// Automatic sweeps choose their rates from what one generator measured, so
// they cannot be sharded.
func (p *Plan) Shard(i, n int) (*Plan, error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("shard %d/%d: want 0 <= i < n", i, n)
	}
	if n == 1 {
		return p, nil
	}
	if p.search != nil {
		return nil, fmt.Errorf("shard %d/%d: a capacity search cannot be sharded: each shard would choose its own probes from its own share of the load; run it whole", i, n)
	}
	out := *p
	out.shard, out.shards = i, n
	out.phases = make([]Phase, len(p.phases))
	for k, ph := range p.phases {
		if ph.Sweep == SweepBaseline || ph.Sweep == SweepProbe || ph.Sweep == SweepAuto {
			return nil, fmt.Errorf("shard %d/%d: phase %s belongs to an automatic sweep, whose rates one generator chooses at run time; use explicit sweep rates", i, n, ph.Name)
		}
		ph.Concurrency = shareOf(ph.Concurrency, i, n)
		if len(ph.Levels) > 0 {
			levels := make([]LevelChange, len(ph.Levels))
			for j, l := range ph.Levels {
				levels[j] = LevelChange{At: l.At, Users: shareOf(l.Users, i, n)}
			}
			ph.Levels = levels
		}
		if ph.Pacer != nil {
			ph.Pacer = shardPacer{inner: ph.Pacer, shard: i, shards: n}
		}
		ph.Rate /= float64(n)
		ph.MaxConcurrency = shareOf(ph.MaxConcurrency, i, n)
		ph.Requests = shareOf(ph.Requests, i, n)
		if p.agentic != nil {
			ph.Requests = p.agentic.shardRequests(p.phases[k].Requests, i, n)
		}
		out.phases[k] = ph
	}
	return &out, nil
}

// ShardOf says which shard of how many the plan is (0 of 1 unsharded).
func (p *Plan) ShardOf() (i, n int) {
	if p.shards == 0 {
		return 0, 1
	}
	return p.shard, p.shards
}

// shareOf is shard i's part of total items dealt out one by one to n shards.
func shareOf(total, i, n int) int {
	if total <= 0 {
		return total
	}
	share := total / n
	if i < total%n {
		share++
	}
	return share
}

// globalIndex turns a shard's k-th conversation into its number in the
// whole plan.
func (p *Plan) globalIndex(k int) int {
	if p.shards <= 1 {
		return k
	}
	return k*p.shards + p.shard
}

// shardPacer is the arrivals shard of shards takes from a schedule.
type shardPacer struct {
	inner         Pacer
	shard, shards int
}

func (s shardPacer) Offset(k int) (time.Duration, bool) {
	return s.inner.Offset(k*s.shards + s.shard)
}
