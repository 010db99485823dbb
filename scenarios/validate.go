package scenarios

import (
	"net/url"
	"regexp"
	"time"
)

// Defaults that are not obvious from a zero value. Each is also stated on the
// field it fills.
const (
	DefaultSeed           = 1
	DefaultSimDialect     = "sglang"
	DefaultArrival        = ArrivalPoisson
	DefaultPromptTokens   = 256
	DefaultOutputTokens   = 128
	DefaultScrapeInterval = time.Second
)

var (
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	dialectPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// fill sets the default of every field the file left out.
func (s *Scenario) fill(d *decoder) {
	if !d.has("seed") {
		s.Seed = DefaultSeed
	}
	if s.Engine.Kind == KindSim && s.Engine.Dialect == "" {
		s.Engine.Dialect = DefaultSimDialect
	}
	s.Workload.fill(d, "workload")
	if !d.has("scrape.interval") {
		s.Scrape.Interval = DefaultScrapeInterval
	}
	if !d.has("scrape.timeout") {
		s.Scrape.Timeout = s.Scrape.Interval
	}
}

func (w *Workload) fill(d *decoder, path string) {
	if w.Rate > 0 && w.Arrival == "" {
		w.Arrival = DefaultArrival
	}
	if !d.has(joinPath(path, "prompt_tokens")) {
		w.Prompt = Length{Dist: DistFixed, Value: DefaultPromptTokens}
	}
	if !d.has(joinPath(path, "output_tokens")) {
		w.Output = Length{Dist: DistFixed, Value: DefaultOutputTokens}
	}
}

// validate records every semantic error; the types were checked while decoding.
func (s *Scenario) validate(d *decoder) {
	switch {
	case !d.has("name"):
		d.failf("name", "missing required field")
	case !namePattern.MatchString(s.Name):
		d.failf("name", "want 1 to 64 letters, digits, '.', '_' or '-' (it names run directories and request ids), got %q", s.Name)
	}
	s.Engine.validate(d, "engine")
	if s.Engine.Kind == KindExternal && s.Model == "" {
		d.failf("model", "missing required field: an external engine needs the model name to request")
	}
	if !d.has("workload") {
		d.failf("workload", "missing required field")
	} else {
		s.Workload.validate(d, "workload")
	}
	s.Scrape.validate(d, "scrape")
}

func (e *Engine) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	if !d.has(path) {
		d.failf(path, "missing required field")
		return
	}
	switch e.Kind {
	case KindSim:
		switch e.Dialect {
		case "sglang", "vllm", "fastdeploy":
		default:
			d.failf(at("dialect"), "the built-in engine speaks sglang, vllm or fastdeploy, not %q", e.Dialect)
		}
		for _, f := range []string{"base_url", "metrics_url", "api_key_env"} {
			if d.has(at(f)) {
				d.failf(at(f), "only for kind external: the built-in engine listens where llmbench starts it")
			}
		}
	case KindExternal:
		if e.Dialect != "" && !dialectPattern.MatchString(e.Dialect) {
			d.failf(at("dialect"), "want a dialect name such as sglang or vllm, got %q", e.Dialect)
		}
		if !d.has(at("base_url")) {
			d.failf(at("base_url"), "missing required field for kind external")
		} else {
			checkURL(d, at("base_url"), e.BaseURL)
		}
		if e.MetricsURL != "" {
			checkURL(d, at("metrics_url"), e.MetricsURL)
		}
		if e.APIKeyEnv != "" && !envNamePattern.MatchString(e.APIKeyEnv) {
			d.failf(at("api_key_env"), "want an environment variable name, got %q", e.APIKeyEnv)
		}
	case "":
		d.failf(at("kind"), "missing required field: sim or external")
	default:
		d.failf(at("kind"), "unknown engine kind %q: sim or external", e.Kind)
	}
}

func checkURL(d *decoder, path, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.failf(path, "want an absolute http(s) URL, got %q", raw)
	}
}

func (w *Workload) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	closed, open := d.has(at("concurrency")), d.has(at("rate"))
	switch {
	case closed && open:
		d.failf(at("rate"), "set concurrency (closed loop) or rate (open loop), not both")
	case !closed && !open:
		d.failf(path, "missing required field: concurrency (closed loop) or rate (open loop)")
	case closed && w.Concurrency < 1:
		d.failf(at("concurrency"), "want at least 1, got %d", w.Concurrency)
	case open && w.Rate <= 0:
		d.failf(at("rate"), "want requests per second > 0, got %g", w.Rate)
	}
	switch {
	case d.has(at("arrival")) && !open:
		d.failf(at("arrival"), "only with rate: a closed loop sends when a user is free")
	case open && w.Arrival != ArrivalConstant && w.Arrival != ArrivalPoisson:
		d.failf(at("arrival"), "unknown arrival %q: constant or poisson", w.Arrival)
	}
	if !d.has(at("duration")) && !d.has(at("requests")) {
		d.failf(path, "missing required field: duration, requests, or both")
	}
	if d.has(at("duration")) && w.Duration <= 0 {
		d.failf(at("duration"), "want a positive duration, got %s", w.Duration)
	}
	if d.has(at("requests")) && w.Requests < 1 {
		d.failf(at("requests"), "want at least 1, got %d", w.Requests)
	}
	w.Prompt.validate(d, at("prompt_tokens"))
	w.Output.validate(d, at("output_tokens"))
}

func (c *Scrape) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	if c.Interval <= 0 {
		d.failf(at("interval"), "want a positive duration, got %s", c.Interval)
	}
	switch {
	case c.Timeout <= 0:
		d.failf(at("timeout"), "want a positive duration, got %s", c.Timeout)
	case c.Interval > 0 && c.Timeout > c.Interval:
		d.failf(at("timeout"), "want at most the interval (%s), got %s", c.Interval, c.Timeout)
	}
	if c.URL != "" {
		checkURL(d, at("url"), c.URL)
	}
}
