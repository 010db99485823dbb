package importer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/endpoints"
)

// guidellmTool is `guidellm benchmark [run]`, as defined by the click
// options of the run command in src/guidellm/__main__.py, the defaults of
// BenchmarkGenerativeTextArgs, the profiles of benchmark/profiles.py, the
// synthetic data config of data/schemas.py and its sampler in
// utils/random.py (vllm-project/guidellm, read at v0.6.1, the last release
// with `guidellm benchmark`; 0.7 replaced it with `guidellm run --backend
// kind=…`, not read here). click takes whole names only.
var guidellmTool = tool{
	command:  "guidellm benchmark",
	prefixes: []string{"guidellm", "benchmark", "run"},
	exact:    true,
	defaults: func() *draft {
		return &draft{
			baseURL: "", backend: "openai_http", endpoint: "/v1/chat/completions", rate: math.Inf(1), burstiness: 1,
			dataset: "random", stream: true, ignoreEOS: true, seed: ptr(42),
			lengths:    func(n int, _ float64, _ bool) (int, int) { return n, n },
			backendAPI: guidellmAPI, portFor: func(string) int { return 8000 },
			peer: peer{endpointFlag: "--request-format"},
		}
	},
	options: guidellmOptions(),
	finish:  guidellmFinish,
}

// guidellmMaxConcurrency is GuideLLM's settings.max_concurrency: what caps
// the requests in flight when nothing else does (its throughput strategy,
// its rate strategies), GUIDELLM__MAX_CONCURRENCY by default 512.
const guidellmMaxConcurrency = 512

func guidellmAPI(backend string) (string, string) {
	if backend == "openai_http" {
		return endpoints.Chat, ""
	}
	return endpoints.Chat, "GuideLLM runs this backend in its own process; llmbench sends the OpenAI API to --target"
}

func guidellmOptions() []option {
	var opts []option
	add := func(o option, more ...string) { opts = append(opts, aliases(o, more...)...) }
	keepAs := func(name string) func(*draft, []string) error { return given(name, noop) }
	add(option{name: "--scenario", arity: 1, apply: keepAs("scenario")}, "-c")
	add(option{name: "--target", arity: 1, apply: given("target", strField(func(d *draft) *string { return &d.baseURL }))})
	add(option{name: "--data", arity: 1, apply: keepAs("data")})
	add(option{name: "--profile", arity: 1, apply: keepAs("profile")}, "--rate-type")
	add(option{name: "--rate", arity: 1, apply: keepAs("rate")})
	add(option{name: "--backend", arity: 1, apply: strField(func(d *draft) *string { return &d.backend })}, "--backend-type")
	add(option{name: "--backend-kwargs", arity: 1, apply: keepAs("backend-kwargs")}, "--backend-args")
	add(option{name: "--model", arity: 1, apply: given("model", strField(func(d *draft) *string { return &d.model }))})
	add(option{name: "--request-format", arity: 1, apply: given("request-format", requestFormat)}, "--request-type")
	add(option{name: "--data-samples", arity: 1, apply: keepAs("data-samples")})
	add(option{name: "--random-seed", arity: 1, apply: seed})
	add(option{name: "--warmup", arity: 1, apply: keepAs("warmup")}, "--warmup-percent")
	add(option{name: "--cooldown", arity: 1, apply: keepAs("cooldown")}, "--cooldown-percent")
	add(option{name: "--rampup", arity: 1, apply: keepAs("rampup")})
	add(option{name: "--max-seconds", arity: 1, apply: keepAs("max-seconds")})
	add(option{name: "--max-requests", arity: 1, apply: keepAs("max-requests")})
	add(option{name: "--max-errors", arity: 1, apply: intField(func(d *draft) *int { return &d.abortErrors })})
	add(option{name: "--max-error-rate", arity: 1, apply: errorRate}, "--max-global-error-rate")

	drop := func(why string, arity int, names ...string) { opts = append(opts, dropAll(why, arity, names...)...) }
	drop("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 1, "--processor", "--processor-args")
	drop("a dataset's loading and column mapping: llmbench reads sharegpt or jsonl files (workload.dataset)", 1,
		"--data-args", "--data-column-mapper", "--data-preprocessors", "--data-preprocessors-kwargs", "--data-finalizer",
		"--data-sampler", "--data-num-workers", "--dataloader-kwargs")
	drop("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 1,
		"--output-dir", "--outputs", "--output-path", "--sample-requests", "--output-sampling", "--output-extras")
	drop("the live view is --view auto|tui|plain", 0, "--disable-console", "--disable-console-outputs",
		"--disable-console-interactive", "--disable-progress", "--display-scheduler-stats")
	drop("no stop on over-saturation: a sweep's report marks where throughput stops following the load", 1, "--over-saturation")
	drop("no stop on over-saturation: a sweep's report marks where throughput stops following the load", 0,
		"--detect-saturation", "--default-over-saturation")
	return opts
}

// requestFormat: an API path or GuideLLM's alias for one.
func requestFormat(d *draft, v []string) error {
	paths := map[string]string{"text_completions": "/v1/completions", "chat_completions": "/v1/chat/completions",
		"audio_transcriptions": "/v1/audio/transcriptions", "audio_translations": "/v1/audio/translations"}
	d.endpoint = v[0]
	if p, ok := paths[v[0]]; ok {
		d.endpoint = p
	}
	return nil
}

// errorRate: llmbench's abort.error_rate is the run's; GuideLLM's per
// benchmark and global rates both become it, the stricter winning.
func errorRate(d *draft, v []string) error {
	f, err := strconv.ParseFloat(v[0], 64)
	if err != nil || !(f > 0 && f <= 1) {
		return fmt.Errorf("want a fraction in (0, 1]")
	}
	if d.abortErrorRate == 0 || f < d.abortErrorRate {
		d.abortErrorRate = f
	}
	return nil
}

// last is the value of an option that takes one (click keeps the last given).
func (d *draft) last(name string) string {
	v := d.raw[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// guidellmFinish reads what depends on several options: the built-in
// scenario under the options, the data, the profile and its rates, the
// limits and the transient phases carved from them.
func guidellmFinish(d *draft) ([]Dropped, error) {
	notes := []Dropped(nil)
	note := func(opt, why string) { notes = append(notes, Dropped{Option: opt, Why: why}) }
	profile, data := cmp.Or(d.last("profile"), "sweep"), d.raw["data"]
	switch sc := d.last("scenario"); {
	case sc == "":
	case guidellmScenarios[sc] != "":
		if !d.has("profile") {
			profile = "sweep"
		}
		if len(data) == 0 {
			data = []string{guidellmScenarios[sc]}
		}
	default:
		note("--scenario "+sc, "a GuideLLM scenario file is not read: give its settings as options")
	}
	if d.backend != "openai_http" && d.backend != "vllm_python" {
		return nil, fmt.Errorf("--backend %s: want openai_http or vllm_python", d.backend)
	}
	if d.has("backend-kwargs") {
		if err := d.backendKwargs(d.last("backend-kwargs"), note); err != nil {
			return nil, fmt.Errorf("--backend-kwargs: %w", err)
		}
	}
	if d.baseURL == "" {
		return nil, fmt.Errorf("--target is required (the server's URL)")
	}
	if strings.HasPrefix(d.baseURL, "https:") && d.last("verify") != "true" {
		note("--backend-kwargs verify (not true)", "GuideLLM does not verify TLS certificates by default; llmbench always does")
	}
	if err := d.guidellmLimits(); err != nil {
		return nil, err
	}
	if err := d.guidellmData(data, note); err != nil {
		return nil, err
	}
	if err := d.guidellmProfile(profile, note); err != nil {
		return nil, err
	}
	if r := d.last("rampup"); r != "" && r != "0" {
		note("--rampup "+r, "a ramp is workload.stages (targets over durations); the load starts at once here")
	}
	return append(d.notes, notes...), nil
}

// guidellmScenarios are the data of GuideLLM's built-in scenarios (both
// sweeps), from src/guidellm/benchmark/scenarios/*.json.
var guidellmScenarios = map[string]string{
	"chat": "prompt_tokens=512,prompt_tokens_stdev=128,prompt_tokens_min=1,prompt_tokens_max=1024," +
		"output_tokens=256,output_tokens_stdev=64,output_tokens_min=1,output_tokens_max=1024",
	"rag": "prompt_tokens=4096,prompt_tokens_stdev=512,prompt_tokens_min=2048,prompt_tokens_max=6144," +
		"output_tokens=512,output_tokens_stdev=128,output_tokens_min=1,output_tokens_max=1024",
}

// guidellmProfile is the load: one strategy, a list of them (a sweep of
// rates or concurrencies), or GuideLLM's own sweep (a synchronous baseline,
// a throughput probe, then rates evenly between: llmbench's sweep.auto).
func (d *draft) guidellmProfile(profile string, note func(opt, why string)) error {
	rates, err := floats(d.raw["rate"])
	if err != nil {
		return fmt.Errorf("--rate: %w", err)
	}
	closed := func(users []int) {
		if len(users) == 1 {
			d.maxConcurrency = users[0]
			return
		}
		d.sweep = map[string][]int{"concurrencies": users}
	}
	switch profile {
	case "synchronous":
		if len(rates) > 0 {
			return fmt.Errorf("--profile synchronous takes no --rate")
		}
		closed([]int{1})
	case "concurrent":
		if len(rates) == 0 {
			return fmt.Errorf("--profile concurrent needs --rate (the concurrent requests)")
		}
		users := make([]int, len(rates))
		for i, r := range rates {
			if users[i] = int(r); users[i] < 1 {
				return fmt.Errorf("--rate %s: want a concurrency of at least 1", fmtFloat(r))
			}
		}
		closed(users)
	case "throughput":
		if len(rates) == 0 {
			note("--profile throughput (no --rate)", "GuideLLM 0.6 wants --rate (its max concurrency); earlier ones used 512, as here")
			rates = []float64{guidellmMaxConcurrency}
		}
		closed([]int{max(1, int(rates[0]))})
	case "async", "constant", "poisson":
		if len(rates) == 0 {
			return fmt.Errorf("--profile %s needs --rate (requests per second)", profile)
		}
		d.arrival = "constant"
		if profile == "poisson" {
			d.arrival = "poisson"
		}
		if len(rates) == 1 {
			d.rate = rates[0]
		} else {
			d.sweep = map[string][]float64{"rates": rates}
		}
		d.maxConcurrency = guidellmMaxConcurrency // GuideLLM's cap; its workers wait for a free slot
	case "sweep":
		size := 10 // settings.default_sweep_number
		if len(rates) > 0 {
			size = int(rates[0])
		}
		if size < 2 {
			return fmt.Errorf("--profile sweep --rate %d: want at least 2 benchmarks", size)
		}
		if size == 2 { // the baseline and the probe alone
			d.sweep = map[string][]int{"concurrencies": {1, guidellmMaxConcurrency}}
			return nil
		}
		node := ordered([]kv{{"points", size - 2}, {"probe_concurrency", guidellmMaxConcurrency}})
		node.Style = yaml.FlowStyle
		d.sweep = ordered([]kv{{"auto", node}})
		d.arrival, d.maxConcurrency = "constant", guidellmMaxConcurrency
	default:
		return fmt.Errorf("--profile %s: want synchronous, concurrent, throughput, async, constant, poisson or sweep", profile)
	}
	if d.sweep != nil && (d.warmups > 0 || d.warmupFor > 0 || d.cooldown > 0 || d.cooldownFor > 0) {
		note("--warmup/--cooldown in a sweep", "GuideLLM warms up and cools down every benchmark; llmbench warms up once, before the first point, and cools down after the last")
	}
	return nil
}

// floats reads click's repeated, comma-separated --rate values.
func floats(vals []string) ([]float64, error) {
	var out []float64
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%q: want numbers above 0", v)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// guidellmLimits: --max-seconds and --max-requests bound each benchmark;
// warmup and cooldown are carved out of them (GuideLLM measures what is
// left), so llmbench's main phase is the rest.
func (d *draft) guidellmLimits() error {
	var maxSec float64
	if s := d.last("max-seconds"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("--max-seconds %s: want seconds above 0", s)
		}
		maxSec = f
	}
	if s := d.last("max-requests"); s != "" {
		if err := scanInt(s, &d.numPrompts); err != nil || d.numPrompts < 1 {
			return fmt.Errorf("--max-requests %s: want a whole number above 0", s)
		}
	}
	if s := d.last("data-samples"); s != "" {
		var n int
		if err := scanInt(s, &n); err != nil {
			return fmt.Errorf("--data-samples %s: %w", s, err)
		}
		if n > 0 && (d.numPrompts == 0 || n < d.numPrompts) { // the data runs out first
			d.numPrompts = n
		}
	}
	if maxSec == 0 && d.numPrompts == 0 {
		return fmt.Errorf("give --max-seconds or --max-requests: without them GuideLLM runs until its data runs out, and synthetic data never does")
	}
	warm, err := transient(d.last("warmup"), d.numPrompts, maxSec)
	if err != nil {
		return fmt.Errorf("--warmup: %w", err)
	}
	cool, err := transient(d.last("cooldown"), d.numPrompts, maxSec)
	if err != nil {
		return fmt.Errorf("--cooldown: %w", err)
	}
	d.warmupFor, d.warmups = warm.dur, warm.req
	d.cooldownFor, d.cooldown = cool.dur, cool.req
	d.duration = time.Duration(maxSec*float64(time.Second)) - warm.dur - cool.dur
	byRequests := d.numPrompts > 0
	d.numPrompts -= warm.req + cool.req
	if maxSec > 0 && d.duration <= 0 || byRequests && d.numPrompts <= 0 {
		return fmt.Errorf("--warmup and --cooldown leave nothing to measure")
	}
	return nil
}

type span struct {
	dur time.Duration
	req int
}

// transient is GuideLLM's TransientPhaseConfig: a number below 1 is a
// fraction of the benchmark, else seconds or requests; a mapping may set
// percent, value and mode (duration, requests, prefer_duration (default),
// prefer_requests, both); a duration is preferred where both apply.
func transient(spec string, maxReq int, maxSec float64) (span, error) {
	if spec == "" {
		return span{}, nil
	}
	var percent, value *float64
	mode := "prefer_duration"
	m, err := guidellmJSON(spec)
	if err != nil {
		return span{}, err
	}
	switch m := m.(type) {
	case float64:
		if m < 1 {
			percent = &m
		} else {
			value = &m
		}
	case map[string]any:
		for k, v := range m {
			f, isNum := v.(float64)
			if s, ok := v.(string); ok && k != "mode" {
				var err error
				if f, err = strconv.ParseFloat(s, 64); err == nil {
					isNum = true
				}
			}
			switch {
			case k == "mode":
				mode = fmt.Sprint(v)
			case k == "percent" && isNum && f >= 0 && f < 1:
				percent = &f
			case k == "value" && isNum && f >= 0:
				value = &f
			default:
				return span{}, fmt.Errorf("%s: %v: want percent in [0, 1), value ≥ 0 or mode", k, v)
			}
		}
	default:
		return span{}, fmt.Errorf("%q: want a number or a mapping", spec)
	}
	if !slices.Contains([]string{"duration", "requests", "prefer_duration", "prefer_requests", "both"}, mode) {
		return span{}, fmt.Errorf("mode %s: want duration, requests, prefer_duration, prefer_requests or both", mode)
	}
	var s span
	if mode != "requests" && maxSec > 0 {
		switch {
		case percent != nil:
			s.dur = time.Duration(*percent * maxSec * float64(time.Second))
		case value != nil:
			s.dur = time.Duration(*value * float64(time.Second))
		}
	}
	if mode != "duration" && maxReq > 0 {
		switch {
		case percent != nil:
			s.req = int(*percent * float64(maxReq))
		case value != nil:
			s.req = int(*value)
		}
	}
	switch {
	case mode == "prefer_duration" && s.dur > 0:
		s.req = 0
	case mode == "prefer_requests" && s.req > 0:
		s.dur = 0
	}
	return s, nil
}

// guidellmJSON reads a value as GuideLLM's parse_json does: key=value pairs
// when it has = and no braces (the values strings), else JSON.
func guidellmJSON(s string) (any, error) {
	if !strings.ContainsAny(s, "{}") && strings.Contains(s, "=") {
		m := map[string]any{}
		for _, pair := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return nil, fmt.Errorf("%q: want JSON or key=value pairs", s)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		return m, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("%q: want JSON or key=value pairs", s)
	}
	return v, nil
}

// guidellmData reads --data: GuideLLM's synthetic text config (key=value
// pairs or JSON) as llmbench's lengths; a dataset file or a Hugging Face id
// is not read.
func (d *draft) guidellmData(data []string, note func(opt, why string)) error {
	if len(data) == 0 {
		return fmt.Errorf("--data is required (GuideLLM's synthetic config, e.g. prompt_tokens=256,output_tokens=128)")
	}
	for _, more := range data[1:] {
		note("--data "+more, "llmbench reads one data source: the first")
	}
	cfg, ok := syntheticConfig(data[0])
	if !ok {
		note("--data "+data[0], "a dataset file or Hugging Face dataset: llmbench reads sharegpt or jsonl files (workload.dataset); synthetic prompts of llmbench's default lengths (256 in, 128 out) instead")
		d.inputLen, d.outputLen = 256, 128
		return nil
	}
	ints := map[string]int{}
	for _, k := range sortedKeys(cfg) {
		v := cfg[k]
		n, err := wholeNumber(v)
		switch {
		case slices.Contains(syntheticKeys, k) && err != nil:
			return fmt.Errorf("--data %s=%v: %w", k, v, err)
		case slices.Contains(syntheticKeys, k):
			ints[k] = n
		case k == "turns" && err == nil && n == 1:
		default:
			note(fmt.Sprintf("--data %s=%v", k, v), "not in llmbench's synthetic data (a shared prefix is prefix_count and prefix_tokens; several turns are workload.dataset {type: multi_turn})")
		}
	}
	if ints["prompt_tokens"] < 1 || ints["output_tokens"] < 1 {
		return fmt.Errorf("--data %s: prompt_tokens and output_tokens are required, above 0", data[0])
	}
	d.prompt = guidellmLength(ints, "prompt_tokens")
	d.output = guidellmLength(ints, "output_tokens")
	if _, ok := ints["prefix_tokens"]; ok || ints["prefix_count"] > 0 {
		// GuideLLM gives the prompts its prefixes in turn, as llmbench's
		// groups do; a group's prompts are distinct up to the run's requests
		d.prefixGroups, d.prefixTokens = max(1, ints["prefix_count"]), ints["prefix_tokens"]
		perRun := d.numPrompts + d.warmups + d.cooldown
		if perRun == 0 {
			perRun = 1000 // bounded by time: a thousand distinct prompts before they repeat
		}
		d.promptsPerGroup = max(1, (perRun+d.prefixGroups-1)/d.prefixGroups)
		if d.prefixTokens == 0 {
			d.prefixGroups = 0
		}
	}
	return nil
}

var syntheticKeys = []string{"prompt_tokens", "prompt_tokens_stdev", "prompt_tokens_min", "prompt_tokens_max",
	"output_tokens", "output_tokens_stdev", "output_tokens_min", "output_tokens_max", "prefix_tokens", "prefix_count"}

// syntheticConfig is --data read as GuideLLM's synthetic config: a JSON
// object, or key=value pairs (more than one =); ok false for anything else.
func syntheticConfig(s string) (map[string]any, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil {
			return m, true
		}
		return nil, false
	}
	if strings.Count(s, "=") < 2 {
		return nil, false
	}
	m, err := guidellmJSON(s)
	if err != nil {
		return nil, false
	}
	out, ok := m.(map[string]any)
	return out, ok
}

// guidellmLength is GuideLLM's IntegerRangeSampler: bounds default to
// mean ± 5 stdev (at least 1), or the mean without a stdev; a normal
// clamped to the bounds, uniform between them without a stdev.
func guidellmLength(cfg map[string]int, key string) any {
	mean, std := cfg[key], cfg[key+"_stdev"]
	lo, hi := mean, mean
	if std > 0 {
		lo, hi = max(1, mean-5*std), mean+5*std
	}
	if v, ok := cfg[key+"_min"]; ok {
		lo = v
	}
	if v, ok := cfg[key+"_max"]; ok {
		hi = v
	}
	var fields []kv
	switch {
	case lo == hi:
		return lo
	case std == 0:
		fields = []kv{{"dist", "uniform"}, {"min", lo}, {"max", hi}}
	default:
		fields = []kv{{"dist", "normal"}, {"mean", mean}, {"stddev", std}, {"min", lo}, {"max", hi}}
	}
	node := ordered(fields)
	node.Style = yaml.FlowStyle
	return node
}

// wholeNumber is a config value as an integer: a JSON number or digits.
func wholeNumber(v any) (int, error) {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && v >= 0 && v < 1<<31 {
			return int(v), nil
		}
	case string:
		var n int
		if scanInt(v, &n) == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a whole number")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// backendKwargs reads the openai_http backend's arguments: what a scenario
// has (stream, timeout, extra headers and body) is carried; the key is not
// written; the HTTP client's own settings are listed.
func (d *draft) backendKwargs(spec string, note func(opt, why string)) error {
	v, err := guidellmJSON(spec)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%q: want a mapping", spec)
	}
	for _, k := range sortedKeys(m) {
		val := m[k]
		opt := fmt.Sprintf("--backend-kwargs %s=%v", k, val)
		switch k {
		case "target", "model":
			if !d.has(k) {
				if k == "target" {
					d.baseURL = fmt.Sprint(val)
				} else {
					d.model = fmt.Sprint(val)
				}
			}
		case "request_format":
			if !d.has("request-format") {
				_ = requestFormat(d, []string{fmt.Sprint(val)})
			}
		case "api_key":
			_ = apiKey("--backend-kwargs api_key")(d, nil)
		case "stream", "verify":
			b, ok := truth(val)
			if !ok {
				return fmt.Errorf("%s: want true or false", k)
			}
			if k == "stream" {
				d.stream = b
				break
			}
			d.keep("verify", []string{strconv.FormatBool(b)})
			if !b {
				note(opt, "TLS is always verified: add the server's CA to the system's trust store")
			}
		case "timeout":
			f, err := strconv.ParseFloat(fmt.Sprint(val), 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("timeout: want seconds above 0")
			}
			d.timeout = time.Duration(f * float64(time.Second))
		case "extras":
			if err := d.extras(val, note); err != nil {
				return err
			}
		case "max_tokens", "max_completion_tokens":
			note(opt, "GuideLLM sends it only for data without output lengths; the synthetic data's output_tokens is llmbench's")
		default:
			note(opt, "a setting of GuideLLM's HTTP client or request handling")
		}
	}
	return nil
}

// extras are GuideLLM's GenerationRequestArguments merged into each request.
func (d *draft) extras(v any, note func(opt, why string)) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("extras: want a mapping")
	}
	for _, k := range sortedKeys(m) {
		sub, isMap := m[k].(map[string]any)
		switch {
		case k == "headers" && isMap:
			for _, h := range sortedKeys(sub) {
				if d.headers == nil {
					d.headers = map[string]string{}
				}
				d.headers[h] = fmt.Sprint(sub[h])
			}
		case k == "body" && isMap:
			for _, b := range sortedKeys(sub) {
				if err := d.bodyMember("--backend-kwargs extras.body", b, sub[b]); err != nil {
					return err
				}
			}
		default:
			note(fmt.Sprintf("--backend-kwargs extras.%s", k), "llmbench carries extra headers and body members only")
		}
	}
	return nil
}

// truth is a JSON boolean or a key=value pair's "true"/"false".
func truth(v any) (bool, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		b, err := strconv.ParseBool(v)
		return b, err == nil
	}
	return false, false
}
