// Package sentload fingerprints the load a benchmark actually sent — how
// many requests, the distributions of their prompt and output lengths and
// of the gaps between their sends, and a hash of the plan — so that two
// llmbench runs, or a run and a peer's result, can be told to have sent
// the same load or not (decision 2221). llmbench's summary.json carries
// one (`load`); package peers makes one from a peer's per-request data.
package sentload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/internal/quantile"
)

// Request is one request as sent: when (seconds on any clock, HasAt false
// when unknown), when it was meant to be (Intended, HasIntended: an open
// loop's schedule), and its prompt and output lengths in tokens.
type Request struct {
	At          float64
	HasAt       bool
	Intended    float64
	HasIntended bool
	Prompt      int
	Output      int
}

// Dist summarises a distribution.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Fingerprint is the load sent.
type Fingerprint struct {
	Requests     int  `json:"requests"`
	PromptTokens Dist `json:"prompt_tokens"`
	OutputTokens Dist `json:"output_tokens"`
	// Gaps are the times between consecutive sends, in send order
	// (absent when the sends' times are unknown).
	Gaps *Dist `json:"gaps_s,omitempty"`
	// PlannedGaps are the gaps between the intended sends of an open loop
	// (llmbench runs only; absent for a closed loop): the schedule itself,
	// which Gaps follow unless sends were late.
	PlannedGaps *Dist `json:"planned_gaps_s,omitempty"`
	// PlanHash is a hash of the plan (llmbench runs only): each request's
	// place, lengths and intended send time; equal hashes mean the same
	// requests were planned in the same order at the same times.
	PlanHash string `json:"plan_hash,omitempty"`
	// Lengths says what the lengths are: "planned" (llmbench: the plan's
	// prompt target and max_tokens) or "recorded" (a peer's: its prompt
	// count and the output it received).
	Lengths string `json:"lengths"`
}

// Of fingerprints reqs.
func Of(reqs []Request, lengths string) Fingerprint {
	fp := Fingerprint{Requests: len(reqs), Lengths: lengths}
	var prompts, outputs, ats, intended []float64
	for _, r := range reqs {
		prompts = append(prompts, float64(r.Prompt))
		outputs = append(outputs, float64(r.Output))
		if r.HasAt {
			ats = append(ats, r.At)
		}
		if r.HasIntended {
			intended = append(intended, r.Intended)
		}
	}
	fp.PromptTokens, fp.OutputTokens = distOf(prompts), distOf(outputs)
	if len(ats) == len(reqs) {
		fp.Gaps = gapsOf(ats)
	}
	if len(intended) == len(reqs) {
		fp.PlannedGaps = gapsOf(intended)
	}
	return fp
}

// gapsOf is the distribution of the gaps between consecutive times (nil
// with fewer than two).
func gapsOf(ts []float64) *Dist {
	if len(ts) < 2 {
		return nil
	}
	ts = slices.Clone(ts)
	slices.Sort(ts)
	gaps := make([]float64, 0, len(ts)-1)
	for i := 1; i < len(ts); i++ {
		gaps = append(gaps, ts[i]-ts[i-1])
	}
	d := distOf(gaps)
	return &d
}

func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Dist{N: len(s), Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1],
		P50: quantile.OfSorted(0.5, s), P90: quantile.OfSorted(0.9, s), P99: quantile.OfSorted(0.99, s)}
}

// PlanItem is one planned request, for the plan hash.
type PlanItem struct {
	Index            int
	Prompt, Output   int
	IntendedMicros   int64 // the intended send, in µs on the run clock (0: closed loop)
	Endpoint, Detail string
}

// PlanHash hashes the plan's items in the order given (sha256, hex).
func PlanHash(items []PlanItem) string {
	h := sha256.New()
	var b [8]byte
	for _, it := range items {
		for _, v := range []int64{int64(it.Index), int64(it.Prompt), int64(it.Output), it.IntendedMicros} {
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			h.Write(b[:])
		}
		h.Write([]byte(it.Endpoint + "\x00" + it.Detail + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Tolerances of Same: lengths within 1 % (or half a token), gaps' means
// (and a schedule's medians) within 10 % (sends are timed by each tool's
// scheduler: a plan replayed twice does not send at the same microseconds).
const (
	lengthTolerance = 0.01
	gapTolerance    = 0.10
)

// Verdict says whether two fingerprints are the same load.
type Verdict struct {
	Same bool `json:"same"`
	// Identical: both plan hashes are there and equal.
	Identical bool     `json:"identical"`
	Checked   []string `json:"checked"` // what was compared
	Differs   []string `json:"differs"` // what differed beyond its tolerance, with both figures
	Unknown   []string `json:"unknown,omitempty"`
}

// Same compares a with b.
func Same(a, b Fingerprint) Verdict {
	var v Verdict
	v.Identical = a.PlanHash != "" && a.PlanHash == b.PlanHash
	v.Checked = append(v.Checked, "requests")
	if a.Requests != b.Requests {
		v.Differs = append(v.Differs, fmt.Sprintf("requests: %d vs %d", a.Requests, b.Requests))
	}
	for _, c := range []struct {
		name string
		x, y Dist
	}{{"prompt tokens", a.PromptTokens, b.PromptTokens}, {"output tokens", a.OutputTokens, b.OutputTokens}} {
		v.Checked = append(v.Checked, c.name)
		for _, s := range []struct {
			stat string
			x, y float64
		}{{"mean", c.x.Mean, c.y.Mean}, {"p50", c.x.P50, c.y.P50}, {"p99", c.x.P99, c.y.P99}} {
			if math.Abs(s.x-s.y) > math.Max(0.5, lengthTolerance*math.Max(s.x, s.y)) {
				v.Differs = append(v.Differs, fmt.Sprintf("%s %s: %.1f vs %.1f", c.name, s.stat, s.x, s.y))
			}
		}
	}
	if a.Lengths != b.Lengths && a.Lengths != "" && b.Lengths != "" {
		v.Unknown = append(v.Unknown, "output tokens compare "+a.Lengths+" with "+b.Lengths+" lengths: equal only when outputs run to max_tokens (ignore_eos)")
	}
	if a.PlannedGaps != nil && b.PlannedGaps != nil {
		v.compareGaps("planned gaps between sends", a.PlannedGaps, b.PlannedGaps, true)
	}
	switch {
	case a.Gaps == nil || b.Gaps == nil:
		v.Unknown = append(v.Unknown, "gaps between sends: a side does not record its send times")
	default:
		v.compareGaps("gaps between sends", a.Gaps, b.Gaps, false)
	}
	v.Same = len(v.Differs) == 0
	return v
}

// compareGaps compares two gap distributions' means and, for a schedule
// (exact: the seed's), medians; an actual send's median moves with each
// scheduler's jitter, its mean only with the span of the sends.
func (v *Verdict) compareGaps(name string, a, b *Dist, median bool) {
	v.Checked = append(v.Checked, name)
	stats := []struct {
		stat string
		x, y float64
	}{{"mean", a.Mean, b.Mean}}
	if median {
		stats = append(stats, struct {
			stat string
			x, y float64
		}{"p50", a.P50, b.P50})
	}
	for _, s := range stats {
		if math.Abs(s.x-s.y) > gapTolerance*math.Max(s.x, s.y) {
			v.Differs = append(v.Differs, fmt.Sprintf("%s %s: %.6f s vs %.6f s", name, s.stat, s.x, s.y))
		}
	}
}

// Says is the verdict in words.
func (v Verdict) Says() string {
	switch {
	case v.Identical && v.Same:
		return "the same load: the same plan (equal plan hashes), sent alike"
	case v.Same:
		return "the same load within tolerance (" + strings.Join(v.Checked, ", ") + " compared)"
	default:
		return "a different load: " + strings.Join(v.Differs, "; ")
	}
}
