package promapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// fakeProm mimics what Prometheus's /api/v1/query answers between its
// scrapes: each series' latest sample at or before the server's now, the
// point stamped with the evaluation time, and timestamp(<one name>) giving
// each series' latest sample time. Its replicas are llama.cpp servers (no
// finished-request counter, so nothing else would wait for the engine to
// settle), scraped at the times each schedule says, on a server clock skew
// ahead of the test's.
//
// The schedule counts from the first query the fake receives, not from a
// time the test reads before the round begins: the round's "just after the
// phase ended" is its own clock reading, and on a busy machine (two CPU
// hogs, -race) tens of milliseconds can pass between the test's reading and
// the round's, which would move a scrape due 50 ms "after" to before the
// round. The first query comes after the round's start, so a scrape
// scheduled after it is after the round's start too, on any machine.
type fakeProm struct {
	skew   time.Duration
	mu     sync.Mutex
	scrape map[string][]fakeScrape // by instance, in time order
	probes []string                // the timestamp() queries received
	first  time.Time               // the first query's arrival: the schedule's zero
}

type fakeScrape struct {
	at        time.Duration // after the first query, on the real clock
	generated float64
}

func (p *fakeProm) latest(inst string, now time.Time) (fakeScrape, bool) {
	var out fakeScrape
	ok := false
	for _, s := range p.scrape[inst] {
		if !p.first.Add(s.at).After(now) {
			out, ok = s, true
		}
	}
	return out, ok
}

func (p *fakeProm) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		// In the URL or, as client_golang sends it, a form.
		q := r.FormValue("query")
		now := time.Now() // the server's clock is now + skew
		eval := float64(now.Add(p.skew).UnixMilli()) / 1000
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.first.IsZero() {
			p.first = now
		}
		var res []any
		point := func(labels map[string]string, v string) {
			res = append(res, map[string]any{"metric": labels, "value": []any{eval, v}})
		}
		probe := strings.HasPrefix(q, "timestamp(")
		if probe {
			p.probes = append(p.probes, q)
		}
		for inst := range p.scrape {
			s, ok := p.latest(inst, now)
			if !ok {
				continue
			}
			base := map[string]string{"instance": inst, "job": "llama"}
			if probe {
				if strings.Contains(q, `{__name__="llamacpp:requests_processing",job="llama"}`) {
					point(base, fmt.Sprint(float64(p.first.Add(s.at).Add(p.skew).UnixMilli())/1000))
				}
				continue
			}
			for name, v := range map[string]float64{"llamacpp:tokens_predicted_total": s.generated, "llamacpp:requests_processing": 0} {
				labels := map[string]string{"__name__": name}
				for k, v := range base {
					labels[k] = v
				}
				point(labels, fmt.Sprint(v))
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFreshClosingSnapshot: a round asked for just after a phase ended
// waits for Prometheus's first scrape after that moment, read from its own
// sample timestamps, instead of answering with the previous scrape's
// values; it fails, naming the replica, when none comes within FreshWait.
func TestFreshClosingSnapshot(t *testing.T) {
	t.Parallel()
	const old, truth = 100, 132 // generated tokens before and after the phase's last requests
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name     string
		skew     time.Duration
		wait     time.Duration
		schedule map[string][]int // scrape times per replica, ms from the round's first query; the first is the old value
		want     float64          // Σ generated tokens; -1: a failed row
		minWait  time.Duration    // the answer comes after the last replica's new scrape
		scraped  time.Duration    // the rows are stamped with the oldest replica's new scrape; 0 = minWait
		wantErr  []string
	}{
		{name: "waits for the scrape after the phase end", wait: 2 * time.Second,
			schedule: map[string][]int{"a:8080": {-800, 150}}, want: truth, minWait: ms(150)},
		{name: "without waiting the round reads the stale sample", wait: -1,
			schedule: map[string][]int{"a:8080": {-800, 150}}, want: old},
		{name: "every replica scraped since", wait: 2 * time.Second,
			schedule: map[string][]int{"a:8080": {-800, 50}, "b:8080": {-300, 300}}, want: 2 * truth, minWait: ms(300), scraped: ms(50)},
		{name: "a server clock ahead does not pass an old sample as new", skew: 2 * time.Second, wait: 2 * time.Second,
			schedule: map[string][]int{"a:8080": {-800, 200}}, want: truth, minWait: ms(200)},
		{name: "a server clock behind", skew: -2 * time.Second, wait: 2 * time.Second,
			schedule: map[string][]int{"a:8080": {-800, 200}}, want: truth, minWait: ms(200)},
		{name: "no scrape within the bound", wait: ms(300),
			schedule: map[string][]int{"a:8080": {-800}, "b:8080": {-800, 20}}, want: -1,
			wantErr: []string{`instance="a:8080" not scraped within 300ms`, "its newest sample is from ", " before"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &fakeProm{skew: tc.skew, scrape: map[string][]fakeScrape{}}
			base := time.Now()
			for inst, times := range tc.schedule {
				for i, at := range times {
					v := float64(truth)
					if i == 0 {
						v = old
					}
					p.scrape[inst] = append(p.scrape[inst], fakeScrape{at: ms(at), generated: v})
				}
			}
			src := Source{URL: p.serve(t), Selector: `job="llama"`, Dialect: "llamacpp", FreshWait: tc.wait}
			start := base.Add(-time.Minute) // the run's start
			rows := src.ScrapeRows(context.Background(), start)
			took := time.Since(base)
			if tc.want < 0 {
				if len(rows) != 1 || rows[0].OK {
					t.Fatalf("rows %+v, want one failed row", rows)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(rows[0].Error, s) {
						t.Errorf("error %q lacks %q", rows[0].Error, s)
					}
				}
				// The stale sample was taken 800 ms before the first query,
				// which comes after the round began: at most 800 ms before
				// it (as good as 800 on a quiet machine).
				if m := regexp.MustCompile(`newest sample is from (\S+) before`).FindStringSubmatch(rows[0].Error); m != nil {
					if age, err := time.ParseDuration(m[1]); err != nil || age <= 0 || age > ms(800) {
						t.Errorf("error %q: the newest sample's age %q, want in (0, 800ms]", rows[0].Error, m[1])
					}
				}
				return
			}
			sum, ok := scrape.SumRows(rows)
			if !ok {
				t.Fatalf("rows %+v", rows)
			}
			if got := sum.Counters[scrape.GenerationTokens]; got != tc.want {
				t.Errorf("Σ generated tokens = %v, want %v", got, tc.want)
			}
			if took < tc.minWait {
				t.Errorf("answered after %v, before the scrape at %v", took, tc.minWait)
			}
			scraped := tc.scraped
			if scraped == 0 {
				scraped = tc.minWait
			}
			for _, r := range rows {
				// stamped with the scrape's time on the run clock, and lasting until the answer
				if at := r.At - time.Minute; at < scraped-ms(5) || r.At+r.Duration > time.Since(start) {
					t.Errorf("%s: At %v after the round began (the scrape was at %v), Duration %v", r.Target, at, scraped, r.Duration)
				}
			}
			if tc.wait > 0 && len(p.probes) == 0 {
				t.Error("no timestamp() probe was sent")
			}
		})
	}
}

// TestFreshWaitStopsWithContext: a cancelled run does not wait out the bound.
func TestFreshWaitStopsWithContext(t *testing.T) {
	t.Parallel()
	p := &fakeProm{scrape: map[string][]fakeScrape{"a:8080": {{at: -time.Second, generated: 1}}}}
	src := Source{URL: p.serve(t), Selector: `job="llama"`, Dialect: "llamacpp", FreshWait: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	rows := src.ScrapeRows(ctx, began)
	if time.Since(began) > 5*time.Second || len(rows) != 1 || rows[0].OK || !strings.Contains(rows[0].Error, "deadline") {
		t.Fatalf("after %v: rows %+v, want one failed row saying the wait was stopped", time.Since(began), rows)
	}
}
