package promapi

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InstantAfter is Instant at the server's now, taken only once Prometheus
// holds, for every replica, a sample scraped at or after since: an instant
// query answers with each series' latest sample, which is up to one scrape
// interval old, so a snapshot asked for just after a phase ends would
// otherwise miss the phase's last requests. Prometheus's own sample
// timestamps tell: a first query learns the replicas and one metric name of
// each, then `timestamp(<name>{<selector>})` (one name, so no two series
// share a label set once timestamp drops the name) is polled until every
// replica's newest sample postdates since, and the fleet is read again. The
// server's clock is set against llmbench's by the first answer's evaluation
// time. It fails, naming the replica, when that takes longer than wait.
func (s Source) InstantAfter(ctx context.Context, since time.Time, wait time.Duration) (Sample, error) {
	q, err := s.Query()
	if err != nil {
		return Sample{}, err
	}
	sent := time.Now()
	eval, all, err := s.vector(ctx, q, time.Time{})
	if err != nil {
		return Sample{}, err
	}
	if len(all) == 0 {
		return s.sample(eval, all)
	}
	// The server's clock minus ours, at the middle of the round trip.
	skew := eval.Sub(sent.Add(time.Since(sent) / 2))
	probes := s.probeNames(all)
	deadline := since.Add(wait)
	for {
		newest, err := s.newestSamples(ctx, probes)
		if err != nil {
			return Sample{}, err
		}
		stale, oldest := staleReplica(probes, newest, since.Add(skew))
		if stale == "" {
			smp, err := s.Instant(ctx, time.Time{})
			smp.Scraped = oldest.Add(-skew)
			return smp, err
		}
		if !time.Now().Add(freshEvery).Before(deadline) {
			by := s.by()
			last := "no sample of it"
			if t, ok := newest[stale]; ok {
				last = fmt.Sprintf("its newest sample is from %v before", since.Sub(t.Add(-skew)).Round(time.Millisecond))
			}
			return Sample{}, fmt.Errorf("prometheus %s: %s=%q not scraped within %v after the snapshot was asked for (%s): is Prometheus still scraping it?",
				s.URL, by, stale, wait, last)
		}
		t := time.NewTimer(freshEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return Sample{}, fmt.Errorf("prometheus %s: waiting for a scrape after the snapshot was asked for: %w", s.URL, ctx.Err())
		case <-t.C:
		}
	}
}

// probeNames picks, for every replica among the series, the first metric
// name it exposes (sorted): the one whose sample timestamps are polled.
// Every series of one target comes from the same scrape, so one name tells
// when the replica was last scraped.
func (s Source) probeNames(all []series) map[string]string {
	by := s.by()
	out := map[string]string{}
	for _, x := range all {
		r := x.labels[by]
		if cur, ok := out[r]; !ok || x.name < cur {
			out[r] = x.name
		}
	}
	return out
}

// newestSamples asks, for each probe name, the timestamp of every series'
// latest sample and returns the newest per replica (on the server's clock).
func (s Source) newestSamples(ctx context.Context, probes map[string]string) (map[string]time.Time, error) {
	names := map[string]bool{}
	for _, n := range probes {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	by := s.by()
	out := map[string]time.Time{}
	for _, name := range sorted {
		q := "timestamp({__name__=" + strconv.Quote(name)
		if sel := strings.TrimSpace(s.Selector); sel != "" {
			q += "," + sel
		}
		_, got, err := s.vector(ctx, q+"})", time.Time{})
		if err != nil {
			return nil, err
		}
		for _, x := range got {
			r := x.labels[by]
			if probes[r] != name {
				continue
			}
			t := time.UnixMilli(int64(math.Round(x.value * 1000))).UTC()
			if cur, ok := out[r]; !ok || t.After(cur) {
				out[r] = t
			}
		}
	}
	return out, nil
}

// staleReplica returns the first replica (sorted) whose newest sample is
// before since, or "" and the oldest of the replicas' newest samples when
// every one is at or after it.
func staleReplica(probes map[string]string, newest map[string]time.Time, since time.Time) (stale string, oldest time.Time) {
	replicas := make([]string, 0, len(probes))
	for r := range probes {
		replicas = append(replicas, r)
	}
	sort.Strings(replicas)
	for _, r := range replicas {
		t, ok := newest[r]
		if !ok || t.Before(since) {
			return r, time.Time{}
		}
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	return "", oldest
}

func (s Source) by() string {
	if s.By == "" {
		return "instance"
	}
	return s.By
}
