package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// sweepRun is a sweep of three measured phases, each with its own load: 40
// requests a phase, their TTFT growing with the load past the second.
func sweepRun() (rundir.RunMeta, []client.Record) {
	ms := time.Millisecond
	meta := rundir.RunMeta{ID: "sweep-run", Scenario: "sweep", Seed: 1, Engine: rundir.EngineMeta{Kind: "sim", BaseURL: "http://e/v1"},
		SLO: &rundir.SLO{TTFT: 100 * ms}}
	var recs []client.Record
	for p, rate := range []float64{2, 4, 8} {
		name := fmt.Sprintf("rate-%g", rate)
		start := time.Duration(p) * 20 * time.Second
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: name, Measured: true, Start: start, End: start + 20*time.Second,
			Load: rate, LoadUnit: "requests/s"})
		ttft := []time.Duration{20 * ms, 40 * ms, 400 * ms}[p]
		for i := range 40 {
			sent := start + time.Duration(i)*time.Duration(float64(time.Second)/min(rate, 5))
			r := client.Record{ID: fmt.Sprintf("%s-%d", name, i), Index: len(recs), Phase: name, Sent: sent, Wrote: sent,
				FirstToken: sent + ttft + time.Duration(i)*ms, PromptTokens: 16, OutputTokens: 4, MaxTokens: 4, Status: 200,
				TokenSource: client.TokensFromUsage}
			for k := range 4 {
				r.Chunks = append(r.Chunks, client.Chunk{At: r.FirstToken + time.Duration(10*k)*ms, Tokens: 1})
			}
			r.End = r.Chunks[3].At
			recs = append(recs, r)
		}
	}
	return meta, recs
}

// A sweep's text summary and report.md open, after the run's header, with
// the per-point table (each point's figures with their intervals and n),
// the capacity or knee and the goodput peak; the figures pooled over every
// load (requests, throughput, the latency table) come only after the
// heading that says no single load produced them.
func TestSweepLeadsWithItsPoints(t *testing.T) {
	t.Parallel()
	meta, recs := sweepRun()
	s := Compute(meta, recs, nil, nil, 0)
	if s.Sweep == nil || len(s.Sweep.Points) != 3 {
		t.Fatalf("sweep %+v", s.Sweep)
	}
	capacity := "**Saturation not reached**"
	if s.Sweep.Saturation.Found {
		capacity = "**Capacity**"
	}
	var text, md bytes.Buffer
	if err := RenderText(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, out string
		table     string   // the per-point table's header
		answer    []string // capacity or knee, goodput peak: before the pooled heading
		pooled    []string // pooled figures: after it
	}{
		{"text", text.String(), "sweep phase", []string{"saturation:", "goodput peaks at"}, []string{"requests: ", "throughput: ", "goodput: ", "latency (ms)"}},
		{"report.md", md.String(), "| sweep phase |", []string{capacity, "**Goodput**: peaks at"}, []string{"| requests ok |", "| latency (ms) |"}},
	} {
		table, heading := strings.Index(c.out, c.table), strings.Index(c.out, PooledHeading)
		if table < 0 || heading < 0 || table > heading {
			t.Errorf("%s: the per-point table at %d, the pooled heading at %d:\n%s", c.name, table, heading, c.out)
			continue
		}
		for _, a := range c.answer {
			if at := strings.Index(c.out, a); at < 0 || at > heading {
				t.Errorf("%s: %q at %d, not before the pooled heading (%d)", c.name, a, at, heading)
			}
		}
		for _, p := range c.pooled {
			if at := strings.Index(c.out, p); at < heading {
				t.Errorf("%s: the pooled %q at %d, before its heading (%d)", c.name, p, at, heading)
			}
		}
		// Each point's row: its n and its TTFT p50 with the interval.
		p := s.Sweep.Points[1]
		b := p.CI["ttft_p50_s"]
		row := fmt.Sprintf("%s (%s–%s)", ms(p.TTFTp50), ms(b.Lo), ms(b.Hi))
		if at := strings.Index(c.out, row); at < table || at > heading {
			t.Errorf("%s: the point %s's TTFT p50 %q not in its table (at %d)", c.name, p.Phase, row, at)
		}
	}
	// 40 requests a point: a p99 with no upper bound, marked in the
	// summary and in both tables, with the legend.
	for _, p := range s.Sweep.Points {
		if p.N["ttft"] != 40 || !strings.Contains(strings.Join(p.TooFew, ","), "ttft_p99_s") {
			t.Errorf("point %s: n %v, too few %v", p.Phase, p.N, p.TooFew)
		}
		if b := p.CI["ttft_p99_s"]; b.Bounded() || b.Lo > p.TTFTp99 {
			t.Errorf("point %s: p99 %g, interval %+v", p.Phase, p.TTFTp99, b)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "report.md": md.String()} {
		if !strings.Contains(out, "†") || !strings.Contains(out, "too few samples for this percentile's rank") {
			t.Errorf("%s marks no small-sample p99:\n%s", name, out)
		}
	}
}

// A run that is not a sweep has no pooled heading: its one load's figures
// are the answer.
func TestSingleLoadHasNoPooledHeading(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	s := Compute(meta, recs, rows, nil, 0)
	var md bytes.Buffer
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if out := textOf(t, s) + md.String(); strings.Contains(out, PooledHeading) || strings.Contains(out, "sweep phase") {
		t.Errorf("a single load's reports speak of pooled points:\n%s", out)
	}
}

// A p99 from 5 requests is marked in summary.json (too_few, its open side
// null), in the text summary and in report.md, with the legend.
func TestSmallSampleP99IsMarked(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	s := Compute(meta, recs, rows, nil, 0)
	var js, md bytes.Buffer
	if err := RenderJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Client struct {
			Latency map[string]struct {
				N  int `json:"n"`
				CI struct {
					TooFew    []string                       `json:"too_few"`
					Quantiles map[string]map[string]*float64 `json:"quantiles"`
				} `json:"ci"`
			} `json:"latency_s"`
		} `json:"client"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	ttft := back.Client.Latency["ttft"]
	if ttft.N != 5 || !strings.Contains(strings.Join(ttft.CI.TooFew, ","), "p99") {
		t.Errorf("summary.json ttft: n %d, too_few %v", ttft.N, ttft.CI.TooFew)
	}
	if p99 := ttft.CI.Quantiles["p99"]; p99 == nil || p99["hi"] != nil || p99["lo"] == nil {
		t.Errorf("summary.json ttft p99 interval %v: want a lower bound and a null upper one", p99)
	}
	d := s.Client.Latency.TTFT
	iv, _ := d.QuantileCI(99)
	marked := fmt.Sprintf("%s† (%s–∞)", ms(d.P99), ms(iv.Lo))
	for name, out := range map[string]string{"text": textOf(t, s), "report.md": md.String()} {
		if !strings.Contains(out, marked) || !strings.Contains(out, "† too few samples") {
			t.Errorf("%s lacks the marked p99 %q or its legend:\n%s", name, marked, out)
		}
	}
}
