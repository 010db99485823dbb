package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/bigrun"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/rundir"
)

// writeBigRunDir writes a generated run directory: run.json and requests.jsonl
// (the first phase not measured), plus extra raw lines appended.
func writeBigRunDir(t testing.TB, n, chunks int, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	spans, err := bigrun.Write(&buf, bigrun.Config{Requests: n, Chunks: chunks, Seed: 5, Phases: []string{"warmup", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range extra {
		buf.WriteString(e)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := rundir.RunMeta{ID: "big", Scenario: "big", StartedAt: start, Ended: start.Add(time.Hour)}
	for i, sp := range spans {
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: sp.Name, Measured: i > 0, Start: sp.Start, End: sp.End})
	}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The summary's per-request figures are exact: the same as a
// straightforward computation over the records read whole; ITL, read from
// a sketch, is within the sketch's stated error (count, mean and max exact).
func TestReportPerRequestFiguresAreExact(t *testing.T) {
	t.Parallel()
	dir := writeBigRunDir(t, 6000, 40)
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []client.Record
	if _, err := rundir.ReadJSONL(filepath.Join(dir, rundir.RequestsFile), func(r *client.Record) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	check := func(name string, got ClientSide, keep func(*client.Record) bool) {
		var ttft, tpot, e2e, itl []float64
		var sent, ok, failed, prompt, output, chunks int
		var buf []time.Duration
		for i := range recs {
			r := &recs[i]
			if !keep(r) {
				continue
			}
			sent++
			if !r.OK() {
				failed++
				continue
			}
			ok++
			prompt += r.PromptTokens
			output += r.OutputTokens
			chunks += len(r.Chunks)
			if d, has := r.TTFT(); has {
				ttft = append(ttft, d.Seconds())
			}
			if d, has := r.TPOT(); has {
				tpot = append(tpot, d.Seconds())
			}
			e2e = append(e2e, r.E2E().Seconds())
			buf = r.ITLs(buf[:0])
			for _, d := range buf {
				itl = append(itl, d.Seconds())
			}
		}
		if got.Requests.Sent != sent || got.Requests.OK != ok || got.Requests.Failed != failed || failed == 0 ||
			got.Tokens.Prompt != prompt || got.Tokens.Output != output || got.Tokens.Chunks != chunks {
			t.Errorf("%s: counts %+v %+v; want sent %d ok %d failed %d prompt %d output %d chunks %d", name,
				got.Requests, got.Tokens, sent, ok, failed, prompt, output, chunks)
		}
		for _, l := range []struct {
			name string
			got  Dist
			xs   []float64
		}{{"ttft", got.Latency.TTFT, ttft}, {"tpot", got.Latency.TPOT, tpot}, {"e2e", got.Latency.E2E, e2e}} {
			if want := distWith(l.xs, rundir.DefaultPercentiles); !reflect.DeepEqual(l.got, want) {
				t.Errorf("%s %s: %+v, want exactly %+v", name, l.name, l.got, want)
			}
		}
		slices.Sort(itl)
		g := got.Latency.ITL
		mean := stat.Mean(itl, nil)
		if g.N != len(itl) || g.Max != itl[len(itl)-1] || math.Abs(g.Mean-mean) > 1e-12*mean {
			t.Errorf("%s itl: n %d mean %g max %g, want %d %g %g", name, g.N, g.Mean, g.Max, len(itl), mean, itl[len(itl)-1])
		}
		for _, p := range rundir.DefaultPercentiles {
			want := stat.Quantile(p/100, stat.LinInterp, itl, nil)
			if q := g.Quantiles[rundir.PercentileName(p)]; math.Abs(q-want) > chunkdigest.RelativeError*want {
				t.Errorf("%s itl p%g: %g, exact %g: beyond %.2f%%", name, p, q, want, 100*chunkdigest.RelativeError)
			}
		}
	}
	check("measured", s.Client, func(r *client.Record) bool { return r.Phase != "warmup" })
	for _, ph := range s.Phases {
		check(ph.Name, ph.Client, func(r *client.Record) bool { return r.Phase == ph.Name })
	}
	if s.Health.Records != len(recs) {
		t.Errorf("%d records, want %d", s.Health.Records, len(recs))
	}
}

// BenchmarkBuild reports on a generated run of 10,000 requests × 200
// chunks (about 75 MB): one streaming pass. go test -bench Build ./report/
func BenchmarkBuild(b *testing.B) {
	dir := writeBigRunDir(b, 10_000, 200)
	st, _ := os.Stat(filepath.Join(dir, rundir.RequestsFile))
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/request")
}
