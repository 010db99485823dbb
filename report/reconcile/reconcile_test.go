package reconcile

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestCleanRunHasNoWarnings: a run whose two views agree yields only info
// findings, in every dialect, and each comparison says so.
func TestCleanRunHasNoWarnings(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"sglang", "vllm", "fastdeploy"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			w := newWorld(dialect)
			if dialect == "sglang" {
				w.logCadence = 250 * time.Millisecond
			}
			fs := Reconcile(w.input())
			if Worst(fs) != Info {
				t.Fatalf("clean run has warnings:\n%s", dump(fs))
			}
			for id, want := range map[string]string{
				IDRequestConservation: "agree: 100 on both sides",
				IDForeignTraffic:      "no foreign traffic",
				IDTokenConservation:   "prompt tokens agree (10000); generation tokens agree (1600)",
				IDPerTokenLatency:     "per-token latency agrees",
				IDConcurrency:         "they agree",
				IDScrapeHealth:        "all ",
				IDKVPressure:          "no request was preempted",
				IDTTFTDecomposition:   "outside the engine",
			} {
				if f := only(t, fs, id); !strings.Contains(f.Verdict, want) {
					t.Errorf("%s: verdict %q lacks %q", id, f.Verdict, want)
				}
			}
		})
	}
}

// TestFindingOrderIsFixed: the same input gives the same findings, in the
// documented order, and they encode as JSON.
func TestFindingOrderIsFixed(t *testing.T) {
	t.Parallel()
	w := newWorld("vllm")
	in := w.input()
	a, b := Reconcile(in), Reconcile(in)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two reconciliations differ:\n%s", diff)
	}
	var ids []string
	for _, f := range a {
		ids = append(ids, f.ID)
	}
	want := []string{IDScrapeHealth, IDRequestConservation, IDForeignTraffic, IDTokenConservation, IDTTFTDecomposition,
		IDPerTokenLatency, IDConcurrency, IDGaugeStaleness, IDKVPressure, IDBucketCeilings}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("finding order (-want +got):\n%s", diff)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Errorf("findings do not encode: %v", err)
	}
}

// TestPlanted: each planted problem yields its finding at its severity,
// with the numbers that prove it.
func TestPlanted(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, f Finding)
	evidenceNear := func(key string, want, tol float64) check {
		return func(t *testing.T, f Finding) {
			t.Helper()
			if got, ok := f.Evidence[key]; !ok || math.Abs(got-want) > tol {
				t.Errorf("evidence %s = %v (present %v), want %v ± %v", key, got, ok, want, tol)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		dialect string
		world   func(w *world)
		edit    func(in *Input)
		id      string
		sev     Severity
		verdict string
		checks  []check
	}{
		{name: "foreign traffic", dialect: "vllm", world: func(w *world) { w.foreign = 40 },
			id: IDForeignTraffic, sev: Warn, verdict: "40 requests llmbench did not send",
			checks: []check{evidenceNear("foreign_requests", 40, 0)}},
		{name: "foreign traffic counted on arrival", dialect: "fastdeploy", world: func(w *world) { w.foreign = 10 },
			id: IDForeignTraffic, sev: Warn, verdict: "did not send"},
		{name: "one probe among many is noted, not a warning", dialect: "sglang", world: func(w *world) { w.perUser = 100; w.foreign = 1 },
			id: IDForeignTraffic, sev: Info, verdict: "1 requests llmbench did not send"},
		{name: "foreign traffic makes tokens incomparable", dialect: "vllm", world: func(w *world) { w.foreign = 40 },
			id: IDTokenConservation, sev: Info, verdict: "not comparable"},
		{name: "foreign traffic explains request excess", dialect: "vllm", world: func(w *world) { w.foreign = 40 },
			id: IDRequestConservation, sev: Info, verdict: "other clients'"},

		{name: "engine counts fewer finished", dialect: "sglang", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.RequestsFinished, -3)
		}, id: IDRequestConservation, sev: Warn, verdict: "3 fewer than the 100",
			checks: []check{evidenceNear("difference", -3, 0)}},
		{name: "closing snapshot never settled", dialect: "fastdeploy", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.RequestsFinished, -3)
			in.Windows[0].Settle = &scrape.Settled{Finished: 97, Want: 100, Polls: 50, Reason: "timed out after 5s"}
		}, id: IDRequestConservation, sev: Warn, verdict: "before the engine settled (timed out after 5s)"},
		// A restart inside the window: the delta is increase()'s, counted
		// from 0 after the reset. When it equals the client's count the
		// requests are conserved across the restart (counter_reset names
		// the restart itself); issue 20 found the old warning, which said
		// the delta "covers only the time since", false.
		{name: "finished counter reset, conserved across it", dialect: "vllm", edit: func(in *Input) {
			in.Windows[0].Before = withCounter(in.Windows[0].Before, scrape.RequestsFinished, 1000)
		}, id: IDRequestConservation, sev: Info, verdict: "agree: 100 on both sides, counted across the engine's restart"},
		// Fewer than the client completed, by no more than the client
		// completed between the scrape before a restart and the one that
		// saw it: the restart erased them (info; counter_reset warns). By
		// more, something else is missing (warn).
		{name: "finished counter reset, counts lost at it", dialect: "vllm", edit: func(in *Input) {
			in.Windows[0].Before = withCounter(in.Windows[0].Before, scrape.RequestsFinished, 1000)
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.RequestsFinished, -3)
		}, id: IDRequestConservation, sev: Info, verdict: "the 3 missing within the 4 the client completed between the scrape before the restart and the one after it",
			checks: []check{evidenceNear("ended_in_restart_gap", 4, 0)}},
		{name: "finished counter reset, more lost than the restart explains", dialect: "vllm", edit: func(in *Input) {
			in.Windows[0].Before = withCounter(in.Windows[0].Before, scrape.RequestsFinished, 1000)
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.RequestsFinished, -30)
		}, id: IDRequestConservation, sev: Warn, verdict: "went backwards"},
		// FastDeploy: an engine that may complete what the client gave up on
		// (vLLM and SGLang abort it: engines.Reconcile.AbandonedNotFinished).
		{name: "failed requests the engine completed", dialect: "fastdeploy", edit: func(in *Input) {
			for i := range 2 {
				in.Records[i].ErrorClass, in.Records[i].Error = client.ErrTimeout, "deadline"
			}
		}, id: IDRequestConservation, sev: Info, verdict: "the 2 extra are among the 2 the client saw fail"},

		{name: "tokenizer counts differently from usage", dialect: "sglang", world: func(w *world) { w.promptSkew = 1 },
			id: IDTokenConservation, sev: Warn, verdict: "+1.0 per request",
			checks: []check{evidenceNear("prompt_difference", 100, 0)}},
		{name: "tokenizer counts differently, engine counting as it works", dialect: "vllm", world: func(w *world) { w.promptSkew = 1 },
			id: IDTokenConservation, sev: Warn, verdict: "+1.0 per request",
			checks: []check{evidenceNear("prompt_difference", 100, 0)}},
		{name: "engine counts computed prompt tokens only", dialect: "vllm", world: func(w *world) { w.cached = 32; w.computedOnly = true },
			id: IDTokenConservation, sev: Info, verdict: "only computed prompt tokens"},
		{name: "output counted from chunks", dialect: "fastdeploy", edit: func(in *Input) {
			for i := range in.Records {
				in.Records[i].TokenSource = client.TokensFromChunks
				in.Records[i].OutputTokens--
			}
		}, id: IDTokenConservation, sev: Info, verdict: "estimated from chunks"},

		{name: "time outside the engine", dialect: "fastdeploy", world: func(w *world) { w.wait = 30 * time.Millisecond },
			id: IDTTFTDecomposition, sev: Warn, verdict: "spent outside the engine",
			checks: []check{evidenceNear("outside_engine_s", 0.0306, 0.0005)}},
		{name: "no verdict on the means of different requests", dialect: "fastdeploy", world: func(w *world) { w.wait = 30 * time.Millisecond },
			edit: func(in *Input) { // the engine's first tokens include requests the client has no TTFT for
				for i := range len(in.Records) / 2 {
					in.Records[i].FirstToken = 0
				}
			},
			id: IDTTFTDecomposition, sev: Info, verdict: "so the means cover different requests"},
		{name: "ttft decomposed into queue and prefill", dialect: "vllm",
			id: IDTTFTDecomposition, sev: Info, verdict: "queue 2.00 ms, prefill 10.0 ms, other 0.50 ms",
			checks: []check{evidenceNear("outside_engine_s", 0.0006, 0.0001), evidenceNear("engine_other_s", 0.0005, 0.0001)}},
		{name: "engine ttft above the client's", dialect: "sglang", edit: func(in *Input) {
			in.Windows[0].After = withHistogramSum(in.Windows[0].After, scrape.TTFT, 3)
		}, id: IDTTFTDecomposition, sev: Warn, verdict: "exceeds the client's"},

		{name: "client-side bottleneck", dialect: "vllm", world: func(w *world) { w.readLag = 2 * time.Millisecond },
			id: IDPerTokenLatency, sev: Warn, verdict: "40% slower than the engine emits them",
			checks: []check{evidenceNear("difference_s", 0.002, 0.0001)}},
		{name: "sglang itl is per token", dialect: "sglang", world: func(w *world) { w.tokensPerChunk = 2 },
			id: IDPerTokenLatency, sev: Info, verdict: "per token, engine 2.50 ms"},
		{name: "vllm itl is per step", dialect: "vllm", world: func(w *world) { w.tokensPerChunk = 2 },
			id: IDPerTokenLatency, sev: Info, verdict: "per chunk, engine 5.00 ms"},
		{name: "vllm stream interval: steps of one token, chunks of two", dialect: "vllm", world: func(w *world) { w.tokensPerChunk = 2; w.stepPerToken = true },
			id: IDPerTokenLatency, sev: Info, verdict: "per-token latency agrees: client ITL 2.50 ms per token, engine 2.50 ms",
			checks: []check{evidenceNear("engine_tokens_per_itl_observation", 1.03, 0.01)}},
		{name: "vllm stream interval with a slow reader", dialect: "vllm", world: func(w *world) {
			w.tokensPerChunk = 2
			w.stepPerToken = true
			w.readLag = 2 * time.Millisecond
		}, id: IDPerTokenLatency, sev: Warn, verdict: "slower than the engine emits them"},
		{name: "engine itl above the client's", dialect: "fastdeploy", edit: func(in *Input) {
			in.Windows[0].After = withHistogramSum(in.Windows[0].After, scrape.ITL, 2)
		}, id: IDPerTokenLatency, sev: Warn, verdict: "above what the client observed"},

		{name: "hidden client-side concurrency cap", dialect: "vllm", world: func(w *world) { w.wait = 300 * time.Millisecond },
			id: IDConcurrency, sev: Warn, verdict: "not inside the engine",
			checks: []check{evidenceNear("client_inflight_mean", 4, 0.2), evidenceNear("server_inflight_mean", 0.9, 0.2)}},
		{name: "sglang concurrency uses the e2e histogram", dialect: "sglang", world: func(w *world) { w.logCadence = time.Second },
			id: IDConcurrency, sev: Info, verdict: "Little's law over its e2e histogram"},

		{name: "sglang staleness stated", dialect: "sglang", world: func(w *world) { w.logCadence = 300 * time.Millisecond },
			id: IDGaugeStaleness, sev: Info, verdict: "--decode-log-interval decode steps (default 40)",
			checks: []check{func(t *testing.T, f Finding) {
				if f.Evidence["requests_running_idle_value"] < 1 {
					t.Errorf("frozen value not found: %v", f.Evidence)
				}
				if !strings.Contains(f.Verdict, "frozen at the last logged value") {
					t.Errorf("verdict does not say the gauge froze: %q", f.Verdict)
				}
				if got := f.Evidence["decode_log_interval_s"]; math.Abs(got-0.2) > 0.001 {
					t.Errorf("decode_log_interval_s = %v, want 40 steps × 5 ms", got)
				}
				if !strings.Contains(f.Verdict, "40 steps take 200.0 ms") {
					t.Errorf("verdict does not state the cadence in time: %q", f.Verdict)
				}
			}}},
		{name: "sglang 40-step cadence measured", dialect: "sglang", world: func(w *world) {
			w.logCadence, w.scrapeEvery = 200*time.Millisecond, 50*time.Millisecond
		}, id: IDGaugeStaleness, sev: Info, verdict: "decode steps: the 40-step decode-log cadence",
			checks: []check{evidenceNear("gen_throughput_steps_per_update", 40, 14)}},
		{name: "live gauge stuck non-zero when idle", dialect: "vllm", edit: func(in *Input) {
			last := &in.Rows[len(in.Rows)-1]
			s := *last.Snapshot
			s.Gauges = map[scrape.Concept]float64{scrape.RequestsRunning: 2, scrape.RequestsWaiting: 0}
			last.Snapshot = &s
		}, id: IDGaugeStaleness, sev: Warn, verdict: "requests_running read 2 with nothing of llmbench's in flight"},
		{name: "live gauge dead under load", dialect: "fastdeploy", edit: func(in *Input) {
			for i := range in.Rows {
				s := *in.Rows[i].Snapshot
				s.Gauges = map[scrape.Concept]float64{scrape.RequestsRunning: 0}
				in.Rows[i].Snapshot = &s
			}
		}, id: IDGaugeStaleness, sev: Warn, verdict: "requests_running read 0 at all"},
		{name: "idle reading ignored after abandoned requests", dialect: "vllm", edit: func(in *Input) {
			last := &in.Rows[len(in.Rows)-1]
			s := *last.Snapshot
			s.Gauges = map[scrape.Concept]float64{scrape.RequestsRunning: 2}
			last.Snapshot = &s
			in.Records[0].ErrorClass = client.ErrCanceled
		}, id: IDGaugeStaleness, sev: Info, verdict: "the gauges look live"},

		{name: "preemptions", dialect: "sglang", world: func(w *world) { w.preemptions = 5 },
			id: IDKVPressure, sev: Warn, verdict: "preempted 5 requests",
			checks: []check{evidenceNear("preemptions_delta", 5, 0.001)}},
		{name: "kv cache near full", dialect: "vllm", world: func(w *world) { w.kvPeak = 0.97 },
			id: IDKVPressure, sev: Warn, verdict: "reached 97%"},

		{name: "fastdeploy ttft above 1 s", dialect: "fastdeploy", world: func(w *world) { w.prefill = 1500 * time.Millisecond; w.perUser = 4 },
			id: IDBucketCeilings, sev: Warn, verdict: "ttft p50/p90/p99 > 1.00 s (100% of 16 observations in +Inf: unknowable)",
			checks: []check{evidenceNear("ttft_top_bound_s", 1, 0), evidenceNear("ttft_above_top_ratio", 1, 0)}},
		{name: "sglang ttft floor", dialect: "sglang",
			id: IDBucketCeilings, sev: Info, verdict: "ttft (all ≤ 100.0 ms)"},

		{name: "dead target", dialect: "vllm", edit: func(in *Input) {
			cut := in.Windows[0].End / 2
			for i := range in.Rows {
				if in.Rows[i].At > cut {
					in.Rows[i] = failed(in.Rows[i], "connect: connection refused")
				}
			}
			after := failed(*in.Windows[0].After, "connect: connection refused")
			in.Windows[0].After = &after
		}, id: IDScrapeDead, sev: Fail, verdict: "stopped answering"},
		{name: "dead from the start", dialect: "fastdeploy", edit: func(in *Input) {
			for i := range in.Rows {
				in.Rows[i] = failed(in.Rows[i], "HTTP 500")
			}
			b, a := failed(*in.Windows[0].Before, "HTTP 500"), failed(*in.Windows[0].After, "HTTP 500")
			in.Windows[0].Before, in.Windows[0].After = &b, &a
		}, id: IDScrapeDead, sev: Fail, verdict: "none of"},
		{name: "dead target leaves no server view", dialect: "vllm", edit: func(in *Input) {
			after := failed(*in.Windows[0].After, "timeout")
			in.Windows[0].After = &after
		}, id: IDServerView, sev: Info, verdict: "main lack one"},
		{name: "one failed scrape", dialect: "sglang", edit: func(in *Input) {
			in.Rows[3] = failed(in.Rows[3], "timed out after 1s")
		}, id: IDScrapeFailures, sev: Warn, verdict: "1 of "},
		{name: "answering without engine metrics", dialect: "vllm", edit: func(in *Input) {
			in.Rows[2].Snapshot = &scrape.Snapshot{}
		}, id: IDScrapeUnrecognised, sev: Warn, verdict: "no metric of a known engine"},
		{name: "no metrics at all", dialect: "vllm", edit: func(in *Input) {
			in.Rows = nil
			in.Windows[0].Before, in.Windows[0].After = nil, nil
		}, id: IDServerView, sev: Info, verdict: "no /metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(tc.dialect)
			if tc.world != nil {
				tc.world(w)
			}
			in := w.input()
			if tc.edit != nil {
				tc.edit(&in)
			}
			fs := Reconcile(in)
			f := only(t, fs, tc.id)
			if f.Severity != tc.sev {
				t.Errorf("severity %s, want %s: %s", f.Severity, tc.sev, f.Verdict)
			}
			if !strings.Contains(f.Verdict, tc.verdict) {
				t.Errorf("verdict %q lacks %q", f.Verdict, tc.verdict)
			}
			for _, c := range tc.checks {
				c(t, f)
			}
			if t.Failed() {
				t.Logf("all findings:\n%s", dump(fs))
			}
		})
	}
}

// withCounter returns a copy of row whose counter c is moved by d.
func withCounter(row *scrape.Row, c scrape.Concept, d float64) *scrape.Row {
	r := *row
	s := *r.Snapshot
	s.Counters = map[scrape.Concept]float64{}
	for k, v := range row.Snapshot.Counters {
		s.Counters[k] = v
	}
	s.Counters[c] += d
	r.Snapshot = &s
	return &r
}

// withHistogramSum returns a copy of row whose histogram c has its sum scaled.
func withHistogramSum(row *scrape.Row, c scrape.Concept, factor float64) *scrape.Row {
	r := *row
	s := *r.Snapshot
	s.Histograms = map[scrape.Concept]scrape.Histogram{}
	for k, h := range row.Snapshot.Histograms {
		s.Histograms[k] = h
	}
	h := s.Histograms[c]
	h.Sum *= factor
	s.Histograms[c] = h
	r.Snapshot = &s
	return &r
}

func failed(r scrape.Row, err string) scrape.Row {
	r.OK, r.Error, r.Snapshot, r.Status = false, err, nil, 0
	return r
}

// TestOverlappingPhases: records are matched to the server's window by when
// they ended, so a cooldown's requests finishing inside the main window
// are ours, not foreign traffic.
func TestOverlappingPhases(t *testing.T) {
	t.Parallel()
	w := newWorld("vllm")
	in := w.input()
	// The last user's requests become a cooldown phase; the window stays.
	for i := range in.Records {
		if strings.HasPrefix(in.Records[i].ID, "u3-") {
			in.Records[i].Phase = "cooldown"
		}
	}
	in.Windows = append(in.Windows, Window{Name: "cooldown", Measured: false})
	fs := Reconcile(in)
	if f := only(t, fs, IDForeignTraffic); f.Severity != Info || !strings.Contains(f.Verdict, "no foreign traffic") {
		t.Errorf("cooldown requests taken for foreign traffic: %s", f.Verdict)
	}
}

// TestSeveralWindows: deltas of several measured windows add up, and a
// window whose snapshot failed is left out with its records.
func TestSeveralWindows(t *testing.T) {
	t.Parallel()
	w := newWorld("sglang")
	in := w.input()
	mid := in.Windows[0].End / 2
	midRow := w.row(mid)
	lostRow := failed(w.row(mid+time.Millisecond), "timeout")
	first := Window{Name: "a", Measured: true, Start: in.Windows[0].Start, End: mid, Before: in.Windows[0].Before, After: &midRow}
	second := Window{Name: "b", Measured: true, Start: mid, End: in.Windows[0].End, Before: &midRow, After: in.Windows[0].After}
	in.Windows = []Window{first, second}
	fs := Reconcile(in)
	if f := only(t, fs, IDRequestConservation); f.Severity != Info || !strings.Contains(f.Verdict, "agree: 100") {
		t.Errorf("two windows: %s", f.Verdict)
	}
	// The second window's engine came back with other TTFT buckets: the
	// histogram cannot be added up and is left out, saying so.
	rebucket := func(r scrape.Row) *scrape.Row {
		s := *r.Snapshot
		s.Histograms = map[scrape.Concept]scrape.Histogram{}
		for k, h := range r.Snapshot.Histograms {
			s.Histograms[k] = h
		}
		h := s.Histograms[scrape.TTFT]
		h.Bounds, h.Cumulative = []float64{0.5, 1}, []float64{h.Count, h.Count}
		s.Histograms[scrape.TTFT] = h
		r.Snapshot = &s
		return &r
	}
	rebucketed := second
	rebucketed.Before, rebucketed.After = rebucket(midRow), rebucket(*second.After)
	in.Windows = []Window{first, rebucketed}
	fs = Reconcile(in)
	if f := only(t, fs, IDBucketCeilings); !strings.Contains(f.Verdict, "left out of every comparison because their buckets changed between windows (the engine restarted with other buckets): ttft") {
		t.Errorf("rebucketed TTFT: %s", f.Verdict)
	}
	if f := only(t, fs, IDTTFTDecomposition); !strings.Contains(f.Verdict, "no TTFT histogram") {
		t.Errorf("TTFT decomposed over mismatched buckets: %s", f.Verdict)
	}

	second.Before = &lostRow
	in.Windows = []Window{first, second}
	fs = Reconcile(in)
	f := only(t, fs, IDRequestConservation)
	if f.Severity != Info || !strings.Contains(f.Verdict, "agree") {
		t.Errorf("one window left: %s", f.Verdict)
	}
	if n := f.Evidence["client_sent"]; n >= 100 || n == 0 {
		t.Errorf("client_sent %v: the second window's records should be left out", n)
	}
}

func TestWorst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []Severity
		want Severity
	}{{nil, Info}, {[]Severity{Info, Warn}, Warn}, {[]Severity{Fail, Warn, Info}, Fail}} {
		var fs []Finding
		for _, s := range tc.in {
			fs = append(fs, Finding{Severity: s})
		}
		if got := Worst(fs); got != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestFleetGauges: when the window's snapshots are a fleet's sum, the
// gauges of every target add up.
func TestFleetGauges(t *testing.T) {
	t.Parallel()
	w := newWorld("vllm")
	in := w.input()
	one := only(t, Reconcile(in), IDConcurrency).Evidence["server_gauge_inflight_mean"]
	var rows []scrape.Row
	for _, r := range in.Rows {
		b := r
		b.Target = "http://replica-b/metrics"
		rows = append(rows, r, b)
	}
	in.Rows = rows
	for _, row := range []*scrape.Row{in.Windows[0].Before, in.Windows[0].After} {
		row.Target = "all targets"
	}
	two := only(t, Reconcile(in), IDConcurrency).Evidence["server_gauge_inflight_mean"]
	if one == 0 || math.Abs(two-2*one) > 1e-9 {
		t.Errorf("fleet gauge mean %v, want twice one target's %v", two, one)
	}
}

// TestRequestSentDuringTheOpeningScrape: an engine that counts a prompt on
// arrival (FastDeploy) counted, in the opening snapshot, a request sent
// while that scrape was being read (a slow scrape on a busy host, or a merged
// run's window opened with another shard's load under way): its prompt may
// lie on either side of the window, so the tokens still agree within the
// edges' tolerance. With an instant scrape the same request was sent after
// the snapshot, and an engine that counted it there is off by its prompt.
func TestRequestSentDuringTheOpeningScrape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scrape time.Duration // how long the opening scrape took
		sev    Severity
		want   string
	}{
		{10 * time.Millisecond, Info, "prompt tokens agree"},
		{0, Warn, "prompt tokens differ"},
	} {
		in := newWorld("fastdeploy").input()
		first := in.Records[0]
		for _, r := range in.Records {
			if r.SentOnWire() < first.SentOnWire() {
				first = r
			}
		}
		before := withCounter(in.Windows[0].Before, scrape.PromptTokens, float64(first.PromptTokens))
		before.Duration = tc.scrape
		if first.SentOnWire() <= before.At || first.SentOnWire() >= before.At+10*time.Millisecond {
			t.Fatalf("the first request was sent at %v, not during a 10 ms scrape from %v", first.SentOnWire(), before.At)
		}
		in.Windows[0].Before = before
		in.Rows = []scrape.Row{*before, *in.Windows[0].After}
		fs := Reconcile(in)
		if f := only(t, fs, IDTokenConservation); f.Severity != tc.sev || !strings.Contains(f.Verdict, tc.want) {
			t.Errorf("opening scrape %v: %s %q, want %s with %q\n%s", tc.scrape, f.Severity, f.Verdict, tc.sev, tc.want, dump(fs))
		}
	}
}
