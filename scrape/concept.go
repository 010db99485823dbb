package scrape

// Kind is how a concept behaves over time: a gauge is read as it is, a
// counter and a histogram only make sense as a difference between two scrapes.
type Kind int

const (
	KindGauge Kind = iota
	KindCounter
	KindHistogram
)

func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindHistogram:
		return "histogram"
	default:
		return "gauge"
	}
}

// Concepts lists every canonical concept in a stable order: gauges, counters,
// histograms, as ARCHITECTURE.md lists them.
func Concepts() []Concept {
	return append([]Concept(nil), allConcepts...)
}

var allConcepts = []Concept{
	RequestsRunning, RequestsWaiting, KVCacheUsage, PrefixCacheHit, GenThroughput, BatchSize,
	PromptTokens, GenerationTokens, CachedTokens, PrefixQueries, PrefixHits,
	RequestsReceived, RequestsFinished, RequestsAborted, Preemptions, DecodeSeconds, PrefillSeconds,
	TTFT, ITL, TPOT, E2E, Queue, Prefill, Decode, Inference,
}

// Kind reports whether c is a gauge, a counter or a histogram. An unknown
// concept is a gauge: it is then read as it is, never differenced.
func (c Concept) Kind() Kind {
	switch c {
	case PromptTokens, GenerationTokens, CachedTokens, PrefixQueries, PrefixHits,
		RequestsReceived, RequestsFinished, RequestsAborted, Preemptions, DecodeSeconds, PrefillSeconds,
		GPUEnergy:
		return KindCounter
	case TTFT, ITL, TPOT, E2E, Queue, Prefill, Decode, Inference:
		return KindHistogram
	}
	return KindGauge
}

// Fraction reports whether c is a 0–1 ratio: several replicas' values are
// averaged rather than added.
func (c Concept) Fraction() bool {
	return c == KVCacheUsage || c == PrefixCacheHit || c == GPUUtilization || c == GPUSMActive
}

func conceptOrder(c Concept) int {
	for i, x := range allConcepts {
		if x == c {
			return i
		}
	}
	return len(allConcepts)
}
