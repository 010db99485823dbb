package importer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/endpoints"
)

// aiperfTool is `aiperf profile`, as defined by the cyclopts parameters of
// UserConfig and ServiceConfig in aiperf/common/config/*.py, their defaults
// in config_defaults.py and the timing rules in user_config.py and
// aiperf/timing (ai-dynamo/aiperf, read at commit db4f6397). cyclopts takes
// whole names only, and no --no-… negations (CLIParameter sets negative=False).
var aiperfTool = tool{
	command:  "aiperf profile",
	prefixes: []string{"aiperf", "profile"},
	exact:    true,
	defaults: func() *draft {
		return &draft{
			baseURL: "localhost:8000", backend: "chat", numPrompts: 10, rate: math.Inf(1), burstiness: 1,
			dataset: "random", inputLen: 550, lengths: func(n int, _ float64, _ bool) (int, int) { return n, n },
			backendAPI: aiperfAPI, portFor: func(string) int { return 8000 },
			peer: peer{backendFlag: "--endpoint-type", endpointFlag: "--endpoint"},
		}
	},
	options: aiperfOptions(),
	finish:  aiperfFinish,
}

// aiperfAPI: the endpoint types that produce tokens over OpenAI's API.
func aiperfAPI(kind string) (string, string) {
	switch kind {
	case "chat":
		return endpoints.Chat, ""
	case "completions":
		return endpoints.Completions, ""
	}
	return endpoints.Chat, "llmbench measures generation over the OpenAI chat or completions API; chat instead"
}

// given keeps an option's values under a name (draft.keep), then applies it.
func given(name string, apply func(*draft, []string) error) func(*draft, []string) error {
	return func(d *draft, v []string) error {
		d.keep(name, v)
		return apply(d, v)
	}
}

// aliases is one option under each of its names.
func aliases(o option, names ...string) []option {
	out := []option{o}
	for _, n := range names {
		o.name = n
		out = append(out, o)
	}
	return out
}

func aiperfOptions() []option {
	var opts []option
	add := func(o option, more ...string) { opts = append(opts, aliases(o, more...)...) }
	add(option{name: "--model-names", arity: 1, apply: aiperfModels}, "--model", "-m")
	add(option{name: "--custom-endpoint", arity: 1, apply: strField(func(d *draft) *string { return &d.endpoint })}, "--endpoint")
	add(option{name: "--endpoint-type", arity: 1, apply: strField(func(d *draft) *string { return &d.backend })})
	add(option{name: "--streaming", apply: switchOn(func(d *draft) *bool { return &d.stream }, true)})
	add(option{name: "--url", arity: 1, apply: strField(func(d *draft) *string { return &d.baseURL })}, "-u")
	add(option{name: "--request-timeout-seconds", arity: 1, apply: seconds(func(d *draft) *time.Duration { return &d.timeout })})
	add(option{name: "--api-key", arity: 1, apply: apiKey("--api-key")})
	add(option{name: "--extra-inputs", arity: many, apply: aiperfExtra})
	add(option{name: "--header", arity: many, apply: aiperfHeaders}, "-H")
	add(option{name: "--input-file", arity: 1, apply: strField(func(d *draft) *string { return &d.datasetPath })})
	add(option{name: "--custom-dataset-type", arity: 1, apply: strField(func(d *draft) *string { return &d.dataset })})
	add(option{name: "--fixed-schedule", apply: given("fixed-schedule", noop)})
	add(option{name: "--random-seed", arity: 1, apply: seed})
	add(option{name: "--goodput", arity: 1, apply: aiperfGoodput})
	add(option{name: "--benchmark-duration", arity: 1, apply: given("duration", atLeast(1, func(d *draft) *time.Duration { return &d.duration }))})
	add(option{name: "--concurrency", arity: 1, apply: intField(func(d *draft) *int { return &d.maxConcurrency })})
	add(option{name: "--request-rate", arity: 1, apply: positive(func(d *draft) *float64 { return &d.rate })})
	add(option{name: "--request-rate-mode", arity: 1, apply: given("rate-mode", strField(func(d *draft) *string { return &d.arrival }))})
	add(option{name: "--request-count", arity: 1, apply: given("count", intField(func(d *draft) *int { return &d.numPrompts }))}, "--num-requests")
	add(option{name: "--warmup-request-count", arity: 1, apply: intField(func(d *draft) *int { return &d.warmups })}, "--num-warmup-requests")
	add(option{name: "--prompt-input-tokens-mean", arity: 1, apply: intField(func(d *draft) *int { return &d.inputLen })},
		"--synthetic-input-tokens-mean", "--isl")
	add(option{name: "--prompt-input-tokens-stddev", arity: 1, apply: nonNegative(func(d *draft) *float64 { return &d.promptStd })},
		"--synthetic-input-tokens-stddev", "--isl-stddev")
	add(option{name: "--prompt-output-tokens-mean", arity: 1, apply: given("osl", intField(func(d *draft) *int { return &d.outputLen }))},
		"--output-tokens-mean", "--osl")
	add(option{name: "--prompt-output-tokens-stddev", arity: 1, apply: nonNegative(func(d *draft) *float64 { return &d.outputStd })},
		"--output-tokens-stddev", "--osl-stddev")
	add(option{name: "--prompt-prefix-pool-size", arity: 1, apply: intField(func(d *draft) *int { return &d.prefixGroups })},
		"--prefix-prompt-pool-size", "--num-prefix-prompts")
	add(option{name: "--prompt-prefix-length", arity: 1, apply: intField(func(d *draft) *int { return &d.prefixTokens })}, "--prefix-prompt-length")
	add(option{name: "--conversation-num", arity: 1, apply: given("conversations", intField(func(d *draft) *int { return &d.promptsPerGroup }))},
		"--num-conversations", "--num-sessions", "--num-dataset-entries", "--num-prompts")
	return append(opts, aiperfDropped()...)
}

// aiperfDropped: the options llmbench has no counterpart for, each with why.
func aiperfDropped() []option {
	var opts []option
	drop := func(why string, arity int, names ...string) { opts = append(opts, dropAll(why, arity, names...)...) }
	drop("llmbench sends one model (the first)", 1, "--model-selection-strategy")
	drop("llmbench does not cancel its own requests; workload.timeout bounds one", 1, "--request-cancellation-rate", "--request-cancellation-delay")
	drop("llmbench measures every request of the phase to its end: none is cut at the duration", 1, "--benchmark-grace-period")
	drop("a trace's timestamps are replayed from its first (workload.trace, time_scale)", 1, "--fixed-schedule-start-offset", "--fixed-schedule-end-offset")
	drop("a trace's timestamps are replayed from its first (workload.trace, time_scale)", 0, "--fixed-schedule-auto-offset")
	drop("llmbench downloads nothing: give the dataset as a file (workload.dataset sharegpt or jsonl)", 1, "--public-dataset")
	drop("llmbench's synthetic prompts are text of the length asked, not blocks of a tokenizer's ids", 1,
		"--prompt-input-tokens-block-size", "--synthetic-input-tokens-block-size", "--isl-block-size")
	drop("one length distribution per scenario: prompt_tokens and output_tokens take {dist: empirical, file} for a mix", 1,
		"--seq-dist", "--sequence-distribution")
	drop("batched inputs are for embeddings and rankings, which llmbench does not measure", 1,
		"--prompt-batch-size", "--batch-size-text", "--batch-size", "-b")
	drop("AIPerf's multi-turn sessions are not carried over: workload.dataset {type: multi_turn, turns} is llmbench's", 1,
		"--conversation-turn-mean", "--session-turns-mean", "--conversation-turn-stddev", "--session-turns-stddev",
		"--conversation-turn-delay-mean", "--session-turn-delay-mean", "--conversation-turn-delay-stddev",
		"--session-turn-delay-stddev", "--conversation-turn-delay-ratio", "--session-delay-ratio")
	drop("llmbench sends text prompts only", 1, "--audio-length-mean", "--audio-length-stddev", "--audio-batch-size",
		"--batch-size-audio", "--audio-format", "--audio-depths", "--audio-sample-rates", "--audio-num-channels",
		"--image-height-mean", "--image-height-stddev", "--image-width-mean", "--image-width-stddev",
		"--image-batch-size", "--batch-size-image", "--image-format")
	drop("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 1,
		"--output-artifact-dir", "--artifact-dir", "--profile-export-file")
	drop("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 1,
		"--tokenizer", "--tokenizer-revision")
	drop("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 0, "--tokenizer-trust-remote-code")
	drop("the live view is --view auto|tui|plain; logging is llmbench's own", 1, "--log-level", "--ui-type", "--ui")
	drop("the live view is --view auto|tui|plain; logging is llmbench's own", 0, "--verbose", "-v", "--extra-verbose", "-vv")
	drop("AIPerf's own processes: llmbench is one process", 1, "--record-processor-service-count", "--record-processors",
		"--workers-max", "--max-workers", "--zmq-host", "--zmq-ipc-path")
	drop("an AIPerf developer option (AIPERF_DEV_MODE)", 1, "--debug-service", "--debug-services", "--trace-service", "--trace-services")
	drop("an AIPerf developer option (AIPERF_DEV_MODE)", 0, "--enable-yappi-profiling", "--show-internal-metrics", "--disable-uvloop")
	return opts
}

// aiperfFinish applies the rules that span options, as UserConfig's
// validators do: a duration or a count, never both; no rate is a burst of
// --concurrency users (default 1); a rate with --concurrency caps it.
func aiperfFinish(d *draft) ([]Dropped, error) {
	if d.has("duration") && d.has("count") {
		return nil, fmt.Errorf("--request-count and --benchmark-duration cannot be used together")
	}
	if d.has("duration") {
		d.numPrompts = 0
	}
	d.arrival, d.backend = strings.ToLower(d.arrival), strings.ToLower(d.backend) // AIPerf's enums ignore case
	switch d.arrival {
	case "", "poisson", "constant":
	case "concurrency_burst":
		if !math.IsInf(d.rate, 1) {
			return nil, fmt.Errorf("--request-rate-mode concurrency_burst cannot be used with --request-rate")
		}
		d.arrival = ""
	default:
		return nil, fmt.Errorf("--request-rate-mode %s: want constant or poisson", d.arrival)
	}
	if math.IsInf(d.rate, 1) && d.maxConcurrency == 0 {
		d.maxConcurrency = 1
	}
	if !strings.Contains(d.baseURL, "://") { // AIPerf's default is localhost:8000
		d.baseURL = "http://" + d.baseURL
	}
	d.endpoint = strings.TrimSpace(d.endpoint)
	notes := d.notes
	if err := aiperfData(d, &notes); err != nil {
		return nil, err
	}
	d.prompt = normal(d.inputLen, d.promptStd)
	switch {
	case d.has("osl"):
		d.output = normal(d.outputLen, d.outputStd)
	case d.outputLen == 0:
		// no max_tokens: the engine stops at its end of sequence
		d.outputLen = 128
		notes = append(notes, Dropped{Option: "--output-tokens-mean (not given)",
			Why: "AIPerf then sends no max_tokens; llmbench always does: output_tokens 128 without ignore_eos"})
	}
	return notes, nil
}

// aiperfData is where prompts come from: synthetic (with a shared prefix
// pool), or a mooncake trace replayed by its timestamps.
func aiperfData(d *draft, notes *[]Dropped) error {
	custom, file := d.dataset, d.datasetPath
	d.dataset, d.datasetPath = "random", ""
	if d.prefixTokens == 0 {
		d.prefixGroups = 0 // empty prefixes
	}
	if d.prefixGroups > 0 {
		// AIPerf prepends one of pool-size prefixes, drawn at random, to each
		// of its --conversation-num prompts; llmbench's groups are even
		d.promptsPerGroup = max(1, cmp.Or(d.promptsPerGroup, 100)/d.prefixGroups)
	} else if d.has("conversations") {
		*notes = append(*notes, Dropped{Option: "--conversation-num " + strconv.Itoa(d.promptsPerGroup),
			Why: "AIPerf reuses that many prompts; llmbench's synthetic prompts are each distinct"})
	}
	switch {
	case d.has("fixed-schedule") && file == "":
		return fmt.Errorf("--fixed-schedule needs --input-file")
	case custom == "random" && file == "":
		return nil
	case custom == "mooncake_trace" && file != "":
		d.trace, d.numPrompts = file, 0
		if d.has("duration") {
			*notes = append(*notes, Dropped{Option: "--benchmark-duration", Why: "a trace replay ends with its trace"})
			d.duration = 0
		}
		if d.maxConcurrency > 1 || !math.IsInf(d.rate, 1) {
			*notes = append(*notes, Dropped{Option: "--concurrency/--request-rate", Why: "the trace's timestamps pace the replay"})
		}
		return nil
	case file == "":
		return fmt.Errorf("--custom-dataset-type %s needs --input-file", custom)
	}
	*notes = append(*notes, Dropped{Option: "--input-file " + file, Why: "only a mooncake_trace file is carried over (workload.trace); synthetic prompts instead"})
	return nil
}

// normal is a length of mean n and the standard deviation given; a fixed
// length without one.
func normal(n int, std float64) any {
	if std == 0 {
		return n
	}
	node := ordered([]kv{{"dist", "normal"}, {"mean", n}, {"stddev", std}})
	node.Style = yaml.FlowStyle
	return node
}

func aiperfModels(d *draft, v []string) error {
	models := strings.Split(v[0], ",")
	d.model = strings.TrimSpace(models[0])
	if len(models) > 1 {
		d.notes = append(d.notes, Dropped{Option: "--model " + v[0], Why: "llmbench sends one model: " + d.model})
	}
	return nil
}

// apiKey keeps a key given in clear out of the scenario file: the scenario
// names the environment variable llmbench reads it from.
func apiKey(name string) func(*draft, []string) error {
	return func(d *draft, _ []string) error {
		d.notes = append(d.notes, Dropped{Option: name + " …",
			Why: "a key is not written into a scenario: export OPENAI_API_KEY (engine.api_key_env), which llmbench sends in the Authorization header"})
		return nil
	}
}

func noop(*draft, []string) error { return nil }

// aiperfPairs reads AIPerf's NAME:VALUE pairs (comma-separated, or a JSON
// object), each value typed as AIPerf's coerce_value types it.
func aiperfPairs(vals []string) ([][2]any, error) {
	var out [][2]any
	for _, s := range vals {
		if strings.HasPrefix(s, "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				return nil, fmt.Errorf("want a JSON object: %w", err)
			}
			for k, v := range m {
				out = append(out, [2]any{k, v})
			}
			continue
		}
		for _, item := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(item, ":")
			if !ok || strings.Contains(v, ":") {
				return nil, fmt.Errorf("%q: want NAME:VALUE", item)
			}
			out = append(out, [2]any{strings.TrimSpace(k), coerce(strings.TrimSpace(v))})
		}
	}
	return out, nil
}

// coerce types a value as AIPerf does: true/false, none/null, integers
// without a leading zero, decimals with one point; else the string.
func coerce(s string) any {
	switch strings.ToLower(s) {
	case "true", "false":
		return strings.EqualFold(s, "true")
	case "none", "null":
		return nil
	}
	digits := strings.TrimPrefix(s, "-")
	if digits != "" && strings.Trim(digits, "0123456789") == "" && (digits == "0" || digits[0] != '0') {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	if strings.Count(s, ".") == 1 && strings.Trim(strings.Replace(digits, ".", "", 1), "0123456789") == "" && digits != "." {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

// aiperfExtra: --extra-inputs go into every request's body, but for the
// members llmbench sets itself (bodyMember).
func aiperfExtra(d *draft, vals []string) error {
	pairs, err := aiperfPairs(vals)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if err := d.bodyMember("--extra-inputs", p[0].(string), p[1]); err != nil {
			return err
		}
	}
	return nil
}

func aiperfHeaders(d *draft, vals []string) error {
	pairs, err := aiperfPairs(vals)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if d.headers == nil {
			d.headers = map[string]string{}
		}
		d.headers[p[0].(string)] = fmt.Sprint(p[1])
	}
	return nil
}

// aiperfGoodput reads the space-separated METRIC:MILLISECONDS objectives
// that llmbench's slo has: time to first token, inter-token latency (its
// TPOT) and request latency.
func aiperfGoodput(d *draft, vals []string) error {
	names := map[string]string{"time_to_first_token": "ttft", "inter_token_latency": "tpot", "request_latency": "e2e"}
	for _, pair := range strings.Fields(vals[0]) {
		k, v, _ := strings.Cut(pair, ":")
		ms, err := strconv.ParseFloat(v, 64)
		if err != nil || k == "" {
			return fmt.Errorf("%q: want METRIC:VALUE", pair)
		}
		if names[k] == "" {
			d.notes = append(d.notes, Dropped{Option: "--goodput " + pair, Why: "llmbench's slo has ttft, tpot and e2e"})
			continue
		}
		if d.slo == nil {
			d.slo = map[string]time.Duration{}
		}
		d.slo[names[k]] = time.Duration(ms * float64(time.Millisecond))
	}
	return nil
}

// seconds reads a duration given in (fractional) seconds.
func seconds(p func(*draft) *time.Duration) func(*draft, []string) error {
	return atLeast(0, p)
}

func atLeast(lo float64, p func(*draft) *time.Duration) func(*draft, []string) error {
	return func(d *draft, v []string) error {
		s, err := strconv.ParseFloat(v[0], 64)
		if err != nil || !(s >= lo) || math.IsInf(s, 0) {
			return fmt.Errorf("want seconds, at least %s", fmtFloat(lo))
		}
		*p(d) = time.Duration(s * float64(time.Second))
		return nil
	}
}

func nonNegative(p func(*draft) *float64) func(*draft, []string) error {
	set := setFloat(p)
	return func(d *draft, v []string) error {
		if err := set(d, v); err != nil {
			return err
		}
		if !(*p(d) >= 0) {
			return fmt.Errorf("want a number of at least 0")
		}
		return nil
	}
}
