package workload

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/scenarios"
)

// lengthDist draws token lengths (always at least 1).
type lengthDist interface {
	draw(rng *rand.Rand) int
}

type fixedLength int

func (f fixedLength) draw(*rand.Rand) int { return int(f) }

type uniformLength struct{ min, max int }

func (u uniformLength) draw(rng *rand.Rand) int { return u.min + rng.IntN(u.max-u.min+1) }

// normalLength is a rounded normal, clamped to [min, max] (max 0: none).
// Clamping moves the mean when mean is within a few stddev of a bound.
type normalLength struct {
	mean, stddev float64
	min, max     int
	log          bool // lognormal: mean and stddev are those of log(length)
}

func (n normalLength) draw(rng *rand.Rand) int {
	x := n.mean + n.stddev*rng.NormFloat64()
	if n.log {
		x = math.Exp(x)
	}
	v := int(math.Min(math.Round(x), MaxTokens)) // NewPlan refused a distribution that reaches it
	if v < n.min {
		v = n.min
	}
	if n.max > 0 && v > n.max {
		v = n.max
	}
	return v
}

// newLognormal takes the mean and standard deviation of the lengths
// themselves, which is what users know, and converts them to the parameters
// of the underlying normal: σ² = ln(1 + s²/m²), μ = ln m − σ²/2.
func newLognormal(mean, stddev float64, min, max int) normalLength {
	sigma2 := math.Log(1 + stddev*stddev/(mean*mean))
	return normalLength{mean: math.Log(mean) - sigma2/2, stddev: math.Sqrt(sigma2), min: min, max: max, log: true}
}

// empiricalLength draws from a histogram: bin i is chosen with probability
// weight[i]/total, then a length uniform in [lo[i], hi[i]].
type empiricalLength struct {
	lo, hi []int
	cum    []float64 // cumulative weights
}

func (e empiricalLength) draw(rng *rand.Rand) int {
	x := rng.Float64() * e.cum[len(e.cum)-1]
	i, _ := slices.BinarySearch(e.cum, x)
	for i < len(e.cum)-1 && e.cum[i] <= x { // skip bins of weight 0
		i++
	}
	return e.lo[i] + rng.IntN(e.hi[i]-e.lo[i]+1)
}

// parseHistogram reads an empirical length histogram: CSV lines
// "tokens,weight" or "min,max,weight"; blank lines and '#' comments are
// skipped, and so is a first line that is not numbers (a header).
func parseHistogram(name string, r io.Reader) (empiricalLength, error) {
	var e empiricalLength
	total := 0.0
	mayBeHeader := true
	lr := newLineReader(name, r)
	for lr.Next() {
		line := lr.Line()
		text := strings.TrimSpace(string(lr.Bytes()))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if mayBeHeader {
			mayBeHeader = false
			if _, err := strconv.ParseFloat(fields[0], 64); err != nil {
				continue
			}
		}
		if len(fields) != 2 && len(fields) != 3 {
			return e, fmt.Errorf("%s:%d: want \"tokens,weight\" or \"min,max,weight\", got %d fields", name, line, len(fields))
		}
		lo, err := strconv.Atoi(fields[0])
		hi := lo
		if err == nil && len(fields) == 3 {
			hi, err = strconv.Atoi(fields[1])
		}
		if err != nil || lo < 1 || hi < lo {
			return e, fmt.Errorf("%s:%d: want token lengths ≥ 1 (and min ≤ max), got %q", name, line, text)
		}
		if err := checkTokens("length", hi); err != nil {
			return e, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		w, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return e, fmt.Errorf("%s:%d: want a weight ≥ 0, got %q", name, line, fields[len(fields)-1])
		}
		total += w
		e.lo, e.hi, e.cum = append(e.lo, lo), append(e.hi, hi), append(e.cum, total)
	}
	if err := lr.Err(); err != nil {
		return e, err
	}
	if total <= 0 {
		return e, fmt.Errorf("%s: no bins with a positive weight", name)
	}
	return e, nil
}

// newLengthDist builds a length distribution; open opens an empirical
// histogram the scenario names.
func newLengthDist(l scenarios.Length, open func(string) (io.ReadCloser, error)) (lengthDist, error) {
	switch l.Dist {
	case scenarios.DistFixed:
		return fixedLength(l.Value), nil
	case scenarios.DistUniform:
		return uniformLength{min: l.Min, max: l.Max}, nil
	case scenarios.DistNormal:
		return normalLength{mean: l.Mean, stddev: l.StdDev, min: max(l.Min, 1), max: l.Max}, nil
	case scenarios.DistLognormal:
		return newLognormal(l.Mean, l.StdDev, max(l.Min, 1), l.Max), nil
	case scenarios.DistEmpirical:
		f, err := open(l.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return parseHistogram(l.File, f)
	}
	return nil, fmt.Errorf("length distribution %q is not supported", l.Dist)
}
