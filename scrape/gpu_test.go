package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// The fixture is shaped as dcgm-exporter writes it in Kubernetes mode
// (internal/pkg/rendermetrics's template: gpu, UUID, pci_bus_id, device,
// modelName, Hostname, the driver-version label, then container, namespace
// and pod; integers for integer fields, %f for doubles), two H200s.
func TestInspectDCGMExposition(t *testing.T) {
	t.Parallel()
	rep, err := Inspect(context.Background(), "testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dialect != DCGM || !rep.Detected || rep.Families != 27 {
		t.Fatalf("dialect %q detected %v families %d", rep.Dialect, rep.Detected, rep.Families)
	}
	s := rep.Snapshot
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("gpus", s.Gauges[GPUCount], 2)
	near("utilization (mean of 87 % and 100 %)", s.Gauges[GPUUtilization], 0.935)
	near("SM active", s.Gauges[GPUSMActive], (0.734512+0.912077)/2)
	near("power (sum)", s.Gauges[GPUPower], 312.457+498.12)
	near("FB used bytes", s.Gauges[GPUMemoryUsed], (126512+126664)*1048576)
	near("FB free bytes", s.Gauges[GPUMemoryFree], (14023+13871)*1048576)
	near("energy J (mJ summed)", s.Counters[GPUEnergy], (81726354121+79110245007)/1000.0)
	if len(s.GPUs) != 2 {
		t.Fatalf("GPUs %+v", s.GPUs)
	}
	g := s.GPUs[1]
	if g.GPU != "1" || g.UUID != "GPU-2f1b7c0e-33aa-4c1e-8e51-7d0b9a6c1f20" || g.Model != "NVIDIA H200" || g.Device != "nvidia1" ||
		g.PCIBusID != "00000000:3B:00.0" || g.Host != "gpu-node-7" || g.Pod != "vllm-0" || g.Namespace != "llm" || g.Container != "vllm" {
		t.Errorf("GPU 1 labels %+v", g)
	}
	for name, want := range map[string]float64{DCGMSMClock: 1755, DCGMMemClock: 2619, DCGMGPUTemp: 44, DCGMMemTemp: 51,
		DCGMClockEvents: 4, DCGMPower: 498.12, DCGMEnergy: 79110245007, DCGMGPUUtil: 100} {
		near("GPU 1 "+name, g.Values[name], want)
	}
	if rep.Sources[GPUEnergy] != DCGMEnergy || rep.Sources[GPUPower] != DCGMPower {
		t.Errorf("sources %v", rep.Sources)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dialect   dcgm (detected", "gpu_energy_joules  160836599.128", "per GPU", "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", "498.12"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "requests_running") {
		t.Errorf("a GPU exposition lists engine concepts as absent:\n%s", buf.String())
	}
	// Named, not detected.
	if rep, err := InspectDialect(context.Background(), "testdata/dcgm-exporter.txt", DCGM); err != nil || rep.Detected || rep.Snapshot.Gauges[GPUCount] != 2 {
		t.Errorf("--dialect dcgm: %v %+v", err, rep)
	}
	// An engine's exposition is never taken for GPU telemetry.
	if rep, err := Inspect(context.Background(), "testdata/sglang.txt"); err != nil || rep.Dialect != "sglang" || len(rep.Snapshot.GPUs) != 0 {
		t.Errorf("sglang: %v %q", err, rep.Dialect)
	}
}

// A GPU time-sliced between two pods is written once per pod with the same
// value: it is one GPU, its power counted once; the old name of the
// clock-event reasons and the lower-case uuid label are read too.
func TestDCGMSharedGPUAndOldNames(t *testing.T) {
	t.Parallel()
	text := `# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",uuid="GPU-a",pci_bus_id="00000000:19:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="h",container="a",namespace="n",pod="p1"} 250.000000
DCGM_FI_DEV_POWER_USAGE{gpu="0",uuid="GPU-a",pci_bus_id="00000000:19:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="h",container="b",namespace="n",pod="p2"} 250.000000
# HELP DCGM_FI_DEV_CLOCK_THROTTLE_REASONS Current clock throttle reasons.
# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0",uuid="GPU-a",pci_bus_id="00000000:19:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="h",container="a",namespace="n",pod="p1"} 8
`
	fams, _, err := parse([]byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	s := dcgm.Map(fams)
	if s.Gauges[GPUPower] != 250 || s.Gauges[GPUCount] != 1 || len(s.GPUs) != 1 {
		t.Fatalf("power %v gpus %v %+v", s.Gauges[GPUPower], s.Gauges[GPUCount], s.GPUs)
	}
	if g := s.GPUs[0]; g.UUID != "GPU-a" || g.Values[DCGMThrottleOld] != 8 {
		t.Errorf("GPU %+v", g)
	}
}

func gpuRow(at time.Duration, energyJ, powerW float64, withCounter bool) Row {
	s := &Snapshot{Dialect: DCGM, Gauges: map[Concept]float64{GPUPower: powerW}, Counters: map[Concept]float64{}}
	if withCounter {
		s.Counters[GPUEnergy] = energyJ
	}
	return Row{At: at, OK: true, Snapshot: s}
}

func TestWindowEnergy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		rows       []Row
		want       float64
		method     string
		ok         bool
		meanPowerW float64
	}{
		{name: "counter", rows: []Row{gpuRow(0, 1000, 1, true), gpuRow(time.Second, 1400, 999, true), gpuRow(2*time.Second, 1600, 1, true)},
			want: 600, method: EnergyFromCounter, ok: true, meanPowerW: 300},
		{name: "counter reset on the way counts from zero", rows: []Row{gpuRow(0, 1000, 0, true), gpuRow(time.Second, 1200, 0, true), gpuRow(2*time.Second, 50, 0, true)},
			want: 250, method: EnergyFromCounter, ok: true, meanPowerW: 125},
		{name: "a step back is two scrapes read out of order, not a reset",
			rows: []Row{gpuRow(0, 1_000_000, 0, true), gpuRow(time.Second, 1_000_300, 0, true), gpuRow(2*time.Second, 1_000_200, 0, true), gpuRow(3*time.Second, 1_000_600, 0, true)},
			want: 600, method: EnergyFromCounter, ok: true, meanPowerW: 200},
		{name: "rows in the order they were read, not started",
			rows: []Row{gpuRow(0, 1000, 0, true), {At: 500 * time.Millisecond, Duration: 2 * time.Second, OK: true, Snapshot: gpuRow(0, 1300, 0, true).Snapshot}, gpuRow(time.Second, 1100, 0, true), gpuRow(2*time.Second, 1400, 0, true)},
			want: 400, method: EnergyFromCounter, ok: true, meanPowerW: 200},
		{name: "power integrated (trapezoids)", rows: []Row{gpuRow(0, 0, 100, false), gpuRow(time.Second, 0, 300, false), gpuRow(3*time.Second, 0, 300, false)},
			want: 200 + 600, method: EnergyFromPower, ok: true, meanPowerW: 800.0 / 3},
		{name: "counter at one end only: power", rows: []Row{gpuRow(0, 5, 100, true), gpuRow(time.Second, 0, 100, false)},
			want: 100, method: EnergyFromPower, ok: true, meanPowerW: 100},
		{name: "one row", rows: []Row{gpuRow(0, 5, 100, true)}},
		{name: "failed rows skipped", rows: []Row{gpuRow(0, 10, 0, true), {At: time.Second}, gpuRow(2*time.Second, 30, 0, true)},
			want: 20, method: EnergyFromCounter, ok: true, meanPowerW: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := WindowEnergy(tt.rows)
			if ok != tt.ok || (ok && (math.Abs(e.Joules-tt.want) > 1e-9 || e.Method != tt.method || math.Abs(e.MeanPower-tt.meanPowerW) > 1e-9)) {
				t.Errorf("WindowEnergy = %+v, %v; want %v J by %q, %v W", e, ok, tt.want, tt.method, tt.meanPowerW)
			}
		})
	}
}

// A GPU value that is NaN or infinite is left out of its reading (the
// snapshot must encode), and its concept is unusable with the reason.
func TestDCGMNonFinite(t *testing.T) {
	t.Parallel()
	fams, _, err := parse([]byte("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} NaN\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	s := dcgm.Map(fams)
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("snapshot does not encode: %v", err)
	}
	if _, ok := s.Gauges[GPUPower]; ok || s.Invalid[GPUPower] == "" || len(s.GPUs) != 1 || s.GPUs[0].Values[DCGMGPUTemp] != 40 {
		t.Errorf("snapshot %+v", s)
	}
}
