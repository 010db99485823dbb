package batch

import (
	"fmt"
	"math"
)

// validatePower checks the GPU power model's fields.
func (p Params) validatePower() []error {
	var errs []error
	if p.GPUs < 0 || p.GPUs > 64 {
		errs = append(errs, fmt.Errorf("gpus must be in [0, 64], got %d", p.GPUs))
	}
	if p.GPUMemoryMiB < 0 {
		errs = append(errs, fmt.Errorf("gpu_memory_mib must be >= 0, got %d", p.GPUMemoryMiB))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"gpu_idle_watts", p.GPUIdleWatts}, {"prefill_joules_per_token", p.PrefillJoulesPerToken},
		{"decode_joules_per_token", p.DecodeJoulesPerToken},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%s must be a finite number >= 0, got %g", f.name, f.v))
		}
	}
	if p.GPUMemoryUsedShare < 0 || p.GPUMemoryUsedShare > 1 || math.IsNaN(p.GPUMemoryUsedShare) {
		errs = append(errs, fmt.Errorf("gpu_memory_used_share must be in [0, 1], got %g", p.GPUMemoryUsedShare))
	}
	return errs
}

// GPUCount is the number of GPUs the engine runs on (GPUs, at least 1).
func (p Params) GPUCount() int { return max(1, p.GPUs) }

// PassJoules is the energy the power model charges a pass beyond idle:
// its computed prompt tokens and its generated tokens.
func (p Params) PassJoules(prefillTokens, generatedTokens int) float64 {
	return float64(prefillTokens)*p.PrefillJoulesPerToken + float64(generatedTokens)*p.DecodeJoulesPerToken
}
