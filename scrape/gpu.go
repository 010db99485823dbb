package scrape

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	dto "github.com/prometheus/client_model/go"
)

// GPU concepts: what a GPU telemetry exporter (NVIDIA's DCGM exporter) says
// of the GPUs an engine runs on, summed or averaged over the GPUs of one
// exposition. They are not an engine's: a run scrapes them from their own
// targets (scenario scrape.gpu) and keeps them apart from the engine's rows
// (docs/decisions/1700).
const (
	GPUUtilization Concept = "gpu_utilization"       // fraction 0–1 of time a kernel ran, mean over GPUs
	GPUSMActive    Concept = "gpu_sm_active"         // fraction 0–1 of cycles an SM had a warp, mean over GPUs
	GPUMemoryUsed  Concept = "gpu_memory_used_bytes" // framebuffer in use, summed
	GPUMemoryFree  Concept = "gpu_memory_free_bytes" // framebuffer free, summed
	GPUPower       Concept = "gpu_power_watts"       // power draw, summed
	GPUEnergy      Concept = "gpu_energy_joules"     // counter: energy since the driver loaded, summed
	GPUCount       Concept = "gpus"                  // GPUs in the exposition
)

// gpuConcepts lists the GPU concepts in the order reports show them.
var gpuConcepts = []Concept{GPUCount, GPUUtilization, GPUSMActive, GPUMemoryUsed, GPUMemoryFree, GPUPower, GPUEnergy}

// GPUConcepts lists every GPU concept, in report order.
func GPUConcepts() []Concept { return append([]Concept(nil), gpuConcepts...) }

// GPUReading is one GPU of an exposition: its identity, as the exporter's
// labels give it, and every one of its values by exposed metric name
// (DCGM_FI_DEV_POWER_USAGE: 312.5), in the exporter's units.
type GPUReading struct {
	GPU      string `json:"gpu"` // the index label
	UUID     string `json:"uuid,omitempty"`
	Model    string `json:"model,omitempty"`
	Device   string `json:"device,omitempty"`
	PCIBusID string `json:"pci_bus_id,omitempty"`
	Host     string `json:"host,omitempty"`
	// Pod, Namespace and Container say which Kubernetes workload holds the
	// GPU when the exporter maps it (kubernetes mode); "" otherwise.
	Pod       string             `json:"pod,omitempty"`
	Namespace string             `json:"namespace,omitempty"`
	Container string             `json:"container,omitempty"`
	Values    map[string]float64 `json:"values"`
}

// The DCGM exporter's metric names llmbench reads (etc/default-counters.csv
// of NVIDIA/dcgm-exporter; SM activity and the clock-event reasons are in
// its profiling and optional sets).
const (
	DCGMGPUUtil      = "DCGM_FI_DEV_GPU_UTIL"                 // gauge, %
	DCGMSMActive     = "DCGM_FI_PROF_SM_ACTIVE"               // gauge, ratio
	DCGMFBUsed       = "DCGM_FI_DEV_FB_USED"                  // gauge, MiB
	DCGMFBFree       = "DCGM_FI_DEV_FB_FREE"                  // gauge, MiB
	DCGMPower        = "DCGM_FI_DEV_POWER_USAGE"              // gauge, W
	DCGMEnergy       = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // counter, mJ since boot
	DCGMSMClock      = "DCGM_FI_DEV_SM_CLOCK"                 // gauge, MHz
	DCGMMemClock     = "DCGM_FI_DEV_MEM_CLOCK"                // gauge, MHz
	DCGMGPUTemp      = "DCGM_FI_DEV_GPU_TEMP"                 // gauge, °C
	DCGMMemTemp      = "DCGM_FI_DEV_MEMORY_TEMP"              // gauge, °C
	DCGMClockEvents  = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"     // gauge, bitmask (DCGM 3.3+)
	DCGMThrottleOld  = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"   // gauge, bitmask, the older name
	dcgmPrefix       = "DCGM_FI_"
	dcgmDialectLabel = "dcgm"
)

// DCGM is the name of the DCGM exporter's telemetry dialect.
const DCGM = dcgmDialectLabel

// dcgmRead are the per-GPU values GPUReading keeps.
var dcgmRead = []string{DCGMGPUUtil, DCGMSMActive, DCGMFBUsed, DCGMFBFree, DCGMPower, DCGMEnergy,
	DCGMSMClock, DCGMMemClock, DCGMGPUTemp, DCGMMemTemp, DCGMClockEvents, DCGMThrottleOld}

// dcgmMirrors are the labels of the Kubernetes workload holding a GPU: a
// GPU shared by several pods (time-slicing) is written once per pod, the same
// value each time, so within one GPU the largest is kept, never the sum.
var dcgmMirrors = []string{"container", "namespace", "pod", "pod_uid"}

// dcgm maps NVIDIA's DCGM exporter (dcgm-exporter, default port 9400). Its
// series carry gpu, UUID (uuid with --use-old-namespace), pci_bus_id,
// device, modelName, Hostname (hostname in newer releases), the driver
// version as a DCGM_FI_DRIVER_VERSION label, and container, namespace and
// pod in Kubernetes.
var dcgm = tableDialect{
	name:     dcgmDialectLabel,
	prefixes: []string{dcgmPrefix},
	mirrors:  dcgmMirrors,
	rules: []rule{
		{concept: GPUUtilization, names: []string{DCGMGPUUtil}, scale: 0.01,
			note: "share of the sample period a kernel ran (NVML's coarse utilisation, 0–100 % scaled to 0–1), mean over GPUs; a busy GPU can be 100 % with most SMs idle"},
		{concept: GPUSMActive, names: []string{DCGMSMActive},
			note: "ratio of cycles an SM had at least one warp (a profiling field, off in the exporter's default counters), mean over GPUs"},
		{concept: GPUMemoryUsed, names: []string{DCGMFBUsed}, scale: 1 << 20, note: "framebuffer MiB in use, summed over GPUs; engines reserve their KV cache up front, so this barely moves with load"},
		{concept: GPUMemoryFree, names: []string{DCGMFBFree}, scale: 1 << 20},
		{concept: GPUPower, names: []string{DCGMPower}, note: "board power draw in W, summed over GPUs"},
		{concept: GPUEnergy, names: []string{DCGMEnergy}, scale: 0.001,
			note: "energy since the driver loaded, mJ scaled to J, summed over GPUs: a phase's energy is its increase"},
	},
	derive: deriveGPUs,
	reads:  dcgmRead,
}

// TelemetryDialect returns the GPU telemetry dialect of that name (only
// DCGM today); ok is false for any other name.
func TelemetryDialect(name string) (Dialect, bool) {
	if name == dcgmDialectLabel {
		return dcgm, true
	}
	return nil, false
}

// TelemetryDialectNames lists the telemetry dialects.
func TelemetryDialectNames() []string { return []string{dcgmDialectLabel} }

// detectTelemetry is the telemetry dialect that owns any of the families,
// or nil.
func detectTelemetry(fams []*dto.MetricFamily) Dialect {
	for _, f := range fams {
		if dcgm.Owns(f.GetName()) {
			return dcgm
		}
	}
	return nil
}

// deriveGPUs fills the GPU count and each GPU's own reading.
func deriveGPUs(ix familyIndex, s *Snapshot) {
	byKey := map[string]*GPUReading{}
	var order []string
	for _, name := range dcgmRead {
		f, ok := ix[name]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			v, ok := scalarValue(m)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue // unusable, and never encodable: left out
			}
			id := gpuIdentity(m)
			key := id.Host + "\xff" + id.UUID + "\xff" + id.GPU
			g, seen := byKey[key]
			if !seen {
				id.Values = map[string]float64{}
				g = &id
				byKey[key] = g
				order = append(order, key)
			}
			if old, dup := g.Values[name]; !dup || v > old {
				g.Values[name] = v
			}
		}
	}
	if len(order) == 0 {
		return
	}
	for _, k := range order {
		s.GPUs = append(s.GPUs, *byKey[k])
	}
	slices.SortStableFunc(s.GPUs, func(a, b GPUReading) int {
		return strings.Compare(a.Host+"\xff"+pad(a.GPU), b.Host+"\xff"+pad(b.GPU))
	})
	s.Gauges[GPUCount] = float64(len(s.GPUs))
}

// pad right-aligns a GPU index so that 10 sorts after 9.
func pad(s string) string {
	if len(s) >= 8 {
		return s
	}
	return strings.Repeat(" ", 8-len(s)) + s
}

// gpuIdentity reads a series' GPU labels as dcgm-exporter writes them.
func gpuIdentity(m *dto.Metric) GPUReading {
	var g GPUReading
	for _, l := range m.GetLabel() {
		v := l.GetValue()
		switch l.GetName() {
		case "gpu":
			g.GPU = v
		case "UUID", "uuid":
			g.UUID = v
		case "modelName", "model_name":
			g.Model = v
		case "device":
			g.Device = v
		case "pci_bus_id":
			g.PCIBusID = v
		case "Hostname", "hostname":
			g.Host = v
		case "pod":
			g.Pod = v
		case "namespace":
			g.Namespace = v
		case "container":
			g.Container = v
		}
	}
	return g
}

// concepts are the concepts a report of this dialect can hold: the GPU
// concepts for a telemetry exposition, the engine's otherwise.
func (r Report) concepts() []Concept {
	if _, ok := TelemetryDialect(r.Dialect); ok {
		return gpuConcepts
	}
	return allConcepts
}

// writeGPUs lists each GPU of a telemetry exposition on a line of its own.
func writeGPUs(w io.Writer, gpus []GPUReading) error {
	if len(gpus) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nper GPU\n  gpu\tmodel\tutil %%\tpower W\tenergy J\tSM MHz\tmem MHz\ttemp °C\tFB used MiB\tclock events\tuuid\n")
	for _, g := range gpus {
		v := func(name string, scale float64) string {
			x, ok := g.Values[name]
			if !ok {
				return "-"
			}
			return formatNumber(x * scale)
		}
		events := v(DCGMClockEvents, 1)
		if events == "-" {
			events = v(DCGMThrottleOld, 1)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.GPU, orDash(g.Model), v(DCGMGPUUtil, 1), v(DCGMPower, 1),
			v(DCGMEnergy, 0.001), v(DCGMSMClock, 1), v(DCGMMemClock, 1), v(DCGMGPUTemp, 1), v(DCGMFBUsed, 1), events, orDash(g.UUID))
	}
	return tw.Flush()
}
