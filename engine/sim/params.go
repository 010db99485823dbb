package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// Params is the performance model (see batch.Params for every field and the
// physics it stands for). It is an alias so that the scheduler package stays
// free of HTTP and metrics.
type Params = batch.Params

// DefaultPreset is the preset "" selects.
const DefaultPreset = "h200-llama3-8b"

// presets are derived in docs/decisions/0102-sim-presets.md; the comments
// repeat the arithmetic.
var presets = map[string]Params{
	// tiny: fast and predictable, for tests. A 2 ms pass, no EOS (requests
	// run to max_tokens), a small KV cache so that preemption is reachable.
	"tiny": {
		MaxRunningRequests: 64,
		MaxPrefillTokens:   2048,
		MaxModelLen:        4096,
		KVBlockSize:        16,
		KVBlocks:           2048, // 32,768 tokens
		PrefixCache:        true,
		DecodeBase:         2 * time.Millisecond,
		DecodePerSeq:       20 * time.Microsecond,
		DecodePerKVToken:   0,
		PrefillOverhead:    500 * time.Microsecond,
		PrefillPerToken:    2 * time.Microsecond,
		EOSMeanTokens:      0,
		DecodeLogInterval:  40,
		Seed:               1,
		// Power (decision 1701): round numbers that make energy per token
		// easy to check by hand, not a real GPU's.
		GPUs:                  1,
		GPUIdleWatts:          100,
		PrefillJoulesPerToken: 0.01,
		DecodeJoulesPerToken:  0.5,
		GPUMemoryMiB:          81559,
		GPUMemoryUsedShare:    0.9,
	},
	// h200-llama3-8b: Llama-3.1-8B-Instruct, BF16, one H200 (141 GB HBM3e,
	// 4.8 TB/s, ~989 dense BF16 TFLOP/s), SGLang defaults.
	//   weights 8.03e9 params × 2 B = 16.06 GB; ÷ 4.8 TB/s = 3.35 ms; at 80 %
	//   achieved bandwidth 4.2 ms, + ~1.3 ms scheduler/launch/sampling
	//   overhead → decode_base 5.5 ms (≈ 180 tok/s for a single stream).
	//   KV per token = 32 layers × 8 KV heads × 128 dim × 2 (K,V) × 2 B =
	//   131,072 B; ÷ (4.8 TB/s × 0.8) = 34 ns → decode_per_kv_token.
	//   KV capacity: 141 GB × 0.88 (mem fraction) − 16.06 GB weights − ~4 GB
	//   activations/graphs ≈ 104 GB ÷ 131,072 B ≈ 794k tokens = 49,600
	//   blocks of 16.
	//   Prefill: 2 × 8.03e9 FLOP/token ÷ (989 TFLOP/s × 50 % MFU) ≈ 32 µs.
	"h200-llama3-8b": {
		MaxRunningRequests: 1024,
		MaxPrefillTokens:   8192,
		MaxModelLen:        131072,
		KVBlockSize:        16,
		KVBlocks:           49600,
		PrefixCache:        true,
		DecodeBase:         5500 * time.Microsecond,
		DecodePerSeq:       15 * time.Microsecond,
		DecodePerKVToken:   34 * time.Nanosecond,
		PrefillOverhead:    1 * time.Millisecond,
		PrefillPerToken:    32 * time.Microsecond,
		Jitter:             0.02,
		EOSMeanTokens:      256,
		DecodeLogInterval:  40,
		Seed:               1,
		//   Power (decision 1701): an H200 SXM idles near 75 W. Prefill
		//   computes 2 × 8.03e9 FLOP per token at ~495 TFLOP/s (50 % MFU)
		//   drawing ~650 W: 32 µs × 650 W ≈ 0.021 J per prompt token. A
		//   decode pass (5.5 ms, memory bound) draws ~500 W, 425 W above
		//   idle: ≈ 2.3 J per pass, ≈ 0.073 J per token at a batch of 32
		//   (the marginal cost at a typical batch; the linear model does not
		//   amortise the pass over a larger batch). 141 GB = 143,771 MiB;
		//   SGLang's 0.88 memory fraction reserves the rest.
		GPUs:                  1,
		GPUIdleWatts:          75,
		PrefillJoulesPerToken: 0.021,
		DecodeJoulesPerToken:  0.073,
		GPUMemoryMiB:          143771,
		GPUMemoryUsedShare:    0.88,
	},
	// h100x4-llama3-70b: Llama-3.1-70B-Instruct, BF16, tensor parallel over
	// four H100 SXM (80 GB HBM3, 3.35 TB/s, ~989 dense BF16 TFLOP/s each).
	//   weights 70.6e9 × 2 B = 141.2 GB, 35.3 GB per GPU; ÷ 3.35 TB/s =
	//   10.5 ms; at 80 % achieved bandwidth 13.2 ms, + ~2.8 ms all-reduce and
	//   scheduling overhead → decode_base 16 ms (≈ 60 tok/s single stream).
	//   KV per token = 80 layers × 8 KV heads × 128 dim × 2 (K,V) × 2 B =
	//   327,680 B, 81,920 B per GPU; ÷ (3.35 TB/s × 0.8) = 31 ns.
	//   KV capacity per GPU: 80 GB × 0.9 − 35.3 GB − ~4 GB = 32.7 GB ÷
	//   81,920 B ≈ 399k tokens = 24,900 blocks of 16.
	//   Prefill: 2 × 70.6e9 FLOP/token ÷ (4 × 989 TFLOP/s × 45 % MFU) ≈ 79 µs.
	"h100x4-llama3-70b": {
		MaxRunningRequests: 256,
		MaxPrefillTokens:   8192,
		MaxModelLen:        131072,
		KVBlockSize:        16,
		KVBlocks:           24900,
		PrefixCache:        true,
		DecodeBase:         16 * time.Millisecond,
		DecodePerSeq:       40 * time.Microsecond,
		DecodePerKVToken:   31 * time.Nanosecond,
		PrefillOverhead:    2 * time.Millisecond,
		PrefillPerToken:    79 * time.Microsecond,
		Jitter:             0.03,
		EOSMeanTokens:      320,
		DecodeLogInterval:  40,
		Seed:               1,
		//   Power (decision 1701): four H100 SXM idling near 70 W each.
		//   Prefill: 79 µs per token on four GPUs at ~650 W each (2,600 W)
		//   ≈ 0.205 J per prompt token. Decode: a 16 ms pass at ~450 W
		//   each, 380 W above idle × 4 = 1,520 W ≈ 24 J per pass, ≈ 0.76 J
		//   per token at a batch of 32. 80 GB = 81,559 MiB each, 0.9 held.
		GPUs:                  4,
		GPUIdleWatts:          70,
		PrefillJoulesPerToken: 0.205,
		DecodeJoulesPerToken:  0.76,
		GPUMemoryMiB:          81559,
		GPUMemoryUsedShare:    0.9,
	},
}

// Preset returns a named parameter set; "" is DefaultPreset.
func Preset(name string) (Params, error) {
	if name == "" {
		name = DefaultPreset
	}
	p, ok := presets[name]
	if !ok {
		return Params{}, fmt.Errorf("unknown sim preset %q (known: %v)", name, PresetNames())
	}
	return p, nil
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NaturalLengthOf is the output length at which the simulated model emits
// EOS for a request id under these params (0 = never): what a request
// without ignore_eos and with a large enough max_tokens generates.
func NaturalLengthOf(p Params, id string) int {
	return batch.NaturalLength(p.Seed, id, p.EOSMeanTokens)
}
