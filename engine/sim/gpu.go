package sim

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// DCGMPath is where the built-in engine serves its emulated DCGM exporter:
// the GPUs it models, as NVIDIA's dcgm-exporter writes them at :9400/metrics.
const DCGMPath = "/dcgm/metrics"

// gpuMeter is the GPU power model's state (docs/decisions/1701): the energy
// the passes charged, the time the GPUs were busy, and what the exporter
// last reported, so that power and utilisation are averages over the time
// since the previous read, as NVML's are over its sample period. The loop
// adds each pass; exporter reads come from handler goroutines.
type gpuMeter struct {
	p     batch.Params
	epoch time.Time

	mu       sync.Mutex
	tokenJ   float64       // energy charged by passes so far, all GPUs together
	busy     time.Duration // sum of pass durations
	prefill  int64         // prompt tokens computed (truth)
	tokens   int64         // tokens generated (truth)
	lastAt   time.Duration // engine clock of the previous read
	lastJ    float64
	lastBusy time.Duration
	power    float64 // all GPUs, W, as last reported
	util     float64 // 0–1, as last reported
}

func newGPUMeter(p batch.Params, epoch time.Time) *gpuMeter {
	return &gpuMeter{p: p, epoch: epoch}
}

// pass charges one forward pass: its computed prompt tokens and generated
// tokens, at its end. Once per pass, never per chunk.
func (m *gpuMeter) pass(b *batch.Batch, start, end time.Duration) {
	generated := 0
	for _, q := range b.Seqs {
		generated += q.StepEmitted()
	}
	m.mu.Lock()
	m.tokenJ += m.p.PassJoules(b.PrefillTokens, generated)
	m.busy += end - start
	m.prefill += int64(b.PrefillTokens)
	m.tokens += int64(generated)
	m.mu.Unlock()
}

// energyAt is the GPUs' energy since the engine started at engine time at:
// idle power all along plus what the passes charged.
func (m *gpuMeter) energyAt(at time.Duration) float64 {
	return m.p.GPUIdleWatts*float64(m.p.GPUCount())*at.Seconds() + m.tokenJ
}

// GPUTruth is the power model's ground truth at one instant.
type GPUTruth struct {
	At            time.Duration `json:"at_ns"`  // engine clock
	Joules        float64       `json:"joules"` // all GPUs since the engine started
	TokenJoules   float64       `json:"token_joules"`
	Busy          time.Duration `json:"busy_ns"`
	PrefillTokens int64         `json:"prefill_tokens"` // prompt tokens computed (cache hits left out)
	Generated     int64         `json:"generated_tokens"`
}

// GPUTruth is the power model's ground truth now.
func (e *Engine) GPUTruth() GPUTruth {
	m := e.gpu
	m.mu.Lock()
	defer m.mu.Unlock()
	at := e.now()
	return GPUTruth{At: at, Joules: m.energyAt(at), TokenJoules: m.tokenJ, Busy: m.busy, PrefillTokens: m.prefill, Generated: m.tokens}
}

// gpuSample is one exporter read: the totals and the averages since the
// previous read.
type gpuSample struct {
	joules, power, util float64
}

func (m *gpuMeter) read(at time.Duration) gpuSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.energyAt(at)
	if dt := at - m.lastAt; dt >= time.Millisecond {
		m.power = (j - m.lastJ) / dt.Seconds()
		m.util = min(1, float64(m.busy-m.lastBusy)/float64(dt))
		m.lastAt, m.lastJ, m.lastBusy = at, j, m.busy
	}
	return gpuSample{joules: j, power: m.power, util: m.util}
}

// handleDCGM writes the emulated exporter's exposition: the default
// counters llmbench reads, per GPU, with dcgm-exporter's labels, its HELP
// texts, integers for integer fields and %f for doubles.
func (e *Engine) handleDCGM(w http.ResponseWriter, r *http.Request) {
	s := e.gpu.read(e.now())
	p := e.cfg.Params
	n := p.GPUCount()
	per := func(v float64) float64 { return v / float64(n) }
	usedMiB := int(math.Round(float64(p.GPUMemoryMiB) * p.GPUMemoryUsedShare))
	smClock, events := 1980, 0
	if s.util == 0 {
		smClock, events = 345, 1 // idle clocks; clock-event reason GpuIdle
	}
	type field struct {
		name, typ, help string
		value           func(gpu int) string
	}
	integer := func(v int64) func(int) string { return func(int) string { return strconv.FormatInt(v, 10) } }
	fields := []field{
		{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", integer(int64(smClock))},
		{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", integer(2619)},
		{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", integer(int64(32 + per(s.power)/20))},
		{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", integer(int64(30 + per(s.power)/20))},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", func(int) string { return fmt.Sprintf("%f", per(s.power)) }},
		// Each GPU's counter starts where its driver left it (a fixed
		// offset per GPU) and counts whole mJ, as DCGM's int64 field does.
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", func(g int) string {
			return strconv.FormatInt(dcgmEnergyBase(g)+int64(math.Floor(per(s.joules)*1000)), 10)
		}},
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", integer(int64(math.Round(s.util * 100)))},
		{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", integer(int64(p.GPUMemoryMiB - usedMiB))},
		{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", integer(int64(usedMiB))},
		{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)", integer(int64(events))},
		{"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", func(int) string { return fmt.Sprintf("%f", s.util*smActiveShare) }},
	}
	var b []byte
	for _, f := range fields {
		b = fmt.Appendf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for g := range n {
			b = fmt.Appendf(b, "%s{gpu=\"%d\",UUID=\"%s\",pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%d\",modelName=\"%s\",Hostname=\"llmbench-sim\",DCGM_FI_DRIVER_VERSION=\"570.124.06\"} %s\n",
				f.name, g, dcgmUUID(p.Seed, g), 0x19+g*0x22, g, dcgmModelName, f.value(g))
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b)
}

// smActiveShare is the emulated SM activity of a busy GPU: a decode pass
// leaves part of the SMs waiting on memory. A modelling choice, not a
// measurement.
const smActiveShare = 0.8

const dcgmModelName = "NVIDIA H200 (llmbench-sim)"

func dcgmEnergyBase(gpu int) int64 { return 81_726_354_121 + int64(gpu)*1_000_003 }

// dcgmUUID is a stable GPU UUID per seed and index, shaped as NVML's.
func dcgmUUID(seed int64, gpu int) string {
	h := batch.Mix64(uint64(seed)*31 + uint64(gpu) + 1)
	g := batch.Mix64(h)
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(h>>32), uint16(h>>16), uint16(h), uint16(g>>48), g&0xffffffffffff)
}
