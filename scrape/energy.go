package scrape

import (
	"cmp"
	"slices"
	"time"
)

// How an Energy figure was found.
const (
	// EnergyFromCounter: the increase of the exporter's energy counter
	// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) between the window's ends.
	EnergyFromCounter = "energy counter"
	// EnergyFromPower: no energy counter at both ends, so the power gauge
	// is integrated over the scrapes (trapezoids between successive
	// samples): as good as the samples are dense.
	EnergyFromPower = "power integrated over the scrapes"
)

// Energy is the GPUs' energy over a window of GPU telemetry scrapes.
type Energy struct {
	Joules  float64       `json:"joules"`
	Method  string        `json:"method"`  // EnergyFromCounter or EnergyFromPower
	Samples int           `json:"samples"` // the scrapes it was found from
	Window  time.Duration `json:"window_ns"`
	// MeanPower is Joules over Window, in W.
	MeanPower float64 `json:"mean_power_w"`
}

// WindowEnergy is the GPUs' energy from the first row of chain to the last
// (rows of one target's telemetry, any order; failed ones are skipped): the
// energy counter's increase along them when both ends have it (a reset on
// the way counts from zero, as Increase does), else the power gauge
// integrated over them. ok is false with fewer than two usable rows or
// neither value.
func WindowEnergy(chain []Row) (Energy, bool) {
	var rows []Row
	for _, r := range chain {
		if r.OK && r.Snapshot != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) < 2 {
		return Energy{}, false
	}
	SortByReadTime(rows)
	first, last := rows[0], rows[len(rows)-1]
	e := Energy{Samples: len(rows), Window: SampleTime(last) - SampleTime(first)}
	_, c0 := first.Snapshot.Counters[GPUEnergy]
	_, c1 := last.Snapshot.Counters[GPUEnergy]
	if c0 && c1 {
		e.Joules, e.Method = energyIncrease(rows), EnergyFromCounter
		return e.withMean(), true
	}
	var have bool
	for i := 1; i < len(rows); i++ {
		p0, ok0 := rows[i-1].Snapshot.Gauges[GPUPower]
		p1, ok1 := rows[i].Snapshot.Gauges[GPUPower]
		if !ok0 || !ok1 {
			continue
		}
		dt := (SampleTime(rows[i]) - SampleTime(rows[i-1])).Seconds()
		e.Joules += (p0 + p1) / 2 * dt
		have = true
	}
	if !have {
		return Energy{}, false
	}
	e.Method = EnergyFromPower
	return e.withMean(), true
}

// energyIncrease is the energy counter's increase along rows, in the order
// they read it (CounterIncrease).
func energyIncrease(rows []Row) float64 {
	values := make([]float64, 0, len(rows))
	for _, r := range rows {
		if v, ok := r.Snapshot.Counters[GPUEnergy]; ok {
			values = append(values, v)
		}
	}
	return CounterIncrease(values)
}

// CounterIncrease is an energy counter's increase along readings in the
// order they were read (SortByReadTime). A value below the highest so far
// is a reset (the exporter or the driver restarted, and the counter started
// again from zero: the new value counts whole) only when it is below half of
// it. A smaller step back is two overlapping scrapes read out of order, or a
// value the exporter cached a moment earlier, and counts nothing: read as a
// reset, it added the counter's whole value since the driver loaded
// (megajoules) to a phase of a few hundred joules. The one rule for the
// phase's energy and each GPU's (report/gpudevices.go).
func CounterIncrease(readings []float64) float64 {
	var total, hi float64
	for i, v := range readings {
		switch {
		case i == 0:
			hi = v
		case v >= hi:
			total += v - hi
			hi = v
		case v < hi/2:
			total += v
			hi = v
		}
	}
	return total
}

// SortByReadTime orders rows by when each read its values (SampleTime),
// stably: a phase's boundary scrape and a periodic one of the same
// exporter can be in flight together, and the one that started first may
// read last.
func SortByReadTime(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(SampleTime(a), SampleTime(b)) })
}

func (e Energy) withMean() Energy {
	if e.Window > 0 {
		e.MeanPower = e.Joules / e.Window.Seconds()
	}
	return e
}

// SampleTime is when a scrape read its values, as near as the client
// knows: the middle of the fetch.
func SampleTime(r Row) time.Duration { return r.At + r.Duration/2 }
