package rundir

// Search is a capacity search as run.json keeps it: what it was asked to
// find, and each probe as the run decided it, in order. The report
// recomputes each probe's verdict from its requests (package capacity); the
// probes' order and attempts are the run's.
type Search struct {
	Over      string        `json:"over"` // rate or concurrency
	Min       float64       `json:"min"`
	Max       float64       `json:"max"`
	Tolerance float64       `json:"tolerance"`
	MaxProbes int           `json:"max_probes"`
	Probes    []SearchProbe `json:"probes,omitempty"`
}

// SearchProbe is one probe: a measured phase at one load.
type SearchProbe struct {
	Phase   string  `json:"phase"`
	Load    float64 `json:"load"`
	Attempt int     `json:"attempt"` // 2: the longer re-probe of an inconclusive first attempt
	Verdict string  `json:"verdict"` // as the run decided it when the probe had drained
}
