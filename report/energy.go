package report

import (
	"cmp"
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// GPUResult is what the GPU telemetry (scenario scrape.gpu, gpu.jsonl) says
// of a phase, or of the measured phases together (docs/decisions/1700).
type GPUResult struct {
	// EnergyJ is the GPUs' energy over the phase, all GPUs of every
	// target: the energy counter's increase between the phase's boundary
	// scrapes, or the power integrated over the scrapes where a target has
	// no counter (Method says which).
	EnergyJ float64 `json:"energy_j"`
	Method  string  `json:"method"`
	// WindowS is the time the energy covers, MeanPowerW the energy over it.
	WindowS    float64 `json:"window_s"`
	MeanPowerW float64 `json:"mean_power_w"`
	// EnergyPerOutputTokenJ is EnergyJ over the output tokens of the
	// phase's successful requests (idle power included: what a token cost
	// at this load); EnergyPerRequestJ over those requests. Absent without
	// any.
	EnergyPerOutputTokenJ *float64 `json:"energy_per_output_token_j,omitempty"`
	EnergyPerRequestJ     *float64 `json:"energy_per_request_j,omitempty"`
	// Utilization and SMActive are the mean over the phase's scrapes of the
	// GPUs' mean (0–1); absent where the exporter does not say.
	Utilization *float64 `json:"utilization,omitempty"`
	SMActive    *float64 `json:"sm_active,omitempty"`
	GPUs        int      `json:"gpus"`
	Samples     int      `json:"samples"`
	Targets     []string `json:"targets"`
	// Devices is each GPU on its own: energy, power, utilisation, memory,
	// clocks and throttling (gpudevices.go).
	Devices []GPUDevice `json:"devices,omitempty"`
}

// gpuOf computes the GPU view of the phases from the GPU rows; nil when
// they have none.
func gpuOf(phases []rundir.PhaseMeta, rows []scrape.Row, outputTokens, requests int) *GPUResult {
	g := &GPUResult{}
	var util, sm []float64
	methods := map[string]bool{}
	have := false
	var chains [][]scrape.Row
	for _, ph := range phases {
		phaseGPUs, window := 0, 0.0
		for _, target := range gpuTargets(ph) {
			chain := gpuChain(ph, rows, target)
			e, ok := scrape.WindowEnergy(chain)
			if !ok {
				continue
			}
			have = true
			chains = append(chains, chain)
			window = max(window, e.Window.Seconds())
			g.EnergyJ += e.Joules
			g.Samples += e.Samples
			methods[e.Method] = true
			if !slices.Contains(g.Targets, target) {
				g.Targets = append(g.Targets, target)
			}
			for _, r := range chain {
				if !r.OK || r.Snapshot == nil {
					continue
				}
				if u, ok := r.Snapshot.Gauges[scrape.GPUUtilization]; ok {
					util = append(util, u)
				}
				if u, ok := r.Snapshot.Gauges[scrape.GPUSMActive]; ok {
					sm = append(sm, u)
				}
			}
			phaseGPUs += int(lastGauge(chain, scrape.GPUCount))
		}
		g.GPUs = max(g.GPUs, phaseGPUs)
		g.WindowS += window
	}
	if !have {
		return nil
	}
	g.Method = scrape.EnergyFromCounter
	if methods[scrape.EnergyFromPower] {
		g.Method = scrape.EnergyFromPower
	}
	if g.WindowS > 0 {
		g.MeanPowerW = g.EnergyJ / g.WindowS
	}
	if outputTokens > 0 {
		v := g.EnergyJ / float64(outputTokens)
		g.EnergyPerOutputTokenJ = &v
	}
	if requests > 0 {
		v := g.EnergyJ / float64(requests)
		g.EnergyPerRequestJ = &v
	}
	g.Utilization, g.SMActive = meanOf(util), meanOf(sm)
	g.Devices = gpuDevices(chains)
	return g
}

// gpuTargets are the GPU targets a phase's boundaries scraped.
func gpuTargets(ph rundir.PhaseMeta) []string {
	var out []string
	for _, r := range ph.GPUBefore {
		if !slices.Contains(out, r.Target) {
			out = append(out, r.Target)
		}
	}
	return out
}

// gpuChain is one target's rows over a phase: its boundary scrapes and
// every periodic scrape between them.
func gpuChain(ph rundir.PhaseMeta, rows []scrape.Row, target string) []scrape.Row {
	var before, after *scrape.Row
	for i := range ph.GPUBefore {
		if ph.GPUBefore[i].Target == target {
			before = &ph.GPUBefore[i]
		}
	}
	for i := range ph.GPUAfter {
		if ph.GPUAfter[i].Target == target {
			after = &ph.GPUAfter[i]
		}
	}
	if before == nil || after == nil {
		return nil // a phase cut short: no window to measure over
	}
	chain := []scrape.Row{*before}
	for _, r := range rows {
		if r.Target == target && r.At > before.At && r.At < after.At {
			chain = append(chain, r)
		}
	}
	chain = append(chain, *after)
	slices.SortStableFunc(chain, func(a, b scrape.Row) int { return cmp.Compare(a.At, b.At) })
	return chain
}

func lastGauge(rows []scrape.Row, c scrape.Concept) float64 {
	for i := len(rows) - 1; i >= 0; i-- {
		if r := rows[i]; r.OK && r.Snapshot != nil {
			if v, ok := r.Snapshot.Gauges[c]; ok {
				return v
			}
		}
	}
	return 0
}

// redacted copies rows with their targets redacted (an exporter's URL may
// carry a token).
func redacted(rows []scrape.Row) []scrape.Row {
	out := append([]scrape.Row(nil), rows...)
	for i := range out {
		rundir.RedactRow(&out[i])
	}
	return out
}

func meanOf(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	return &m
}

// AddGPUAndCache adds the GPU telemetry and the prefix cache's state to a
// summary: per phase, for the measured phases together, on each sweep
// point, and the cache's findings.
func AddGPUAndCache(s *Summary, meta rundir.RunMeta, gpuRows []scrape.Row, records []client.Record) {
	byName := map[string]int{}
	for i, ph := range s.Phases {
		byName[ph.Name] = i
	}
	var measured []rundir.PhaseMeta
	var tokens, requests int
	for _, ph := range meta.Phases {
		ph.GPUBefore, ph.GPUAfter = redacted(ph.GPUBefore), redacted(ph.GPUAfter)
		i, ok := byName[ph.Name]
		if !ok {
			continue
		}
		pr := &s.Phases[i]
		pr.GPU = gpuOf([]rundir.PhaseMeta{ph}, gpuRows, pr.Client.Tokens.Output, pr.Client.Requests.OK)
		pr.Cache = cacheOf(ph, *pr, records)
		if ph.Measured {
			measured = append(measured, ph)
			tokens += pr.Client.Tokens.Output
			requests += pr.Client.Requests.OK
		}
	}
	s.GPU = gpuOf(measured, gpuRows, tokens, requests)
	if s.Sweep != nil {
		for i := range s.Sweep.Points {
			p := &s.Sweep.Points[i]
			if j, ok := byName[p.Phase]; ok {
				if g := s.Phases[j].GPU; g != nil {
					p.GPUUtilization, p.EnergyPerOutputTokenJ = g.Utilization, g.EnergyPerOutputTokenJ
				}
				if c := s.Phases[j].Cache; c != nil {
					p.Cache = c.Mode
				}
			}
		}
	}
	s.Findings = append(s.Findings, cacheFindings(s.Phases)...)
}
