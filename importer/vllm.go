package importer

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
)

// vllmTool is `vllm bench serve`, as defined by add_cli_args in
// vllm/benchmarks/serve.py and add_dataset_parser in
// vllm/benchmarks/datasets/arg_utils.py (vllm-project/vllm, read at commits
// 009e6d4a and 237145ea).
var vllmTool = tool{
	command:  "vllm bench serve",
	prefixes: []string{"vllm", "bench", "serve"},
	defaults: func() *draft {
		return &draft{
			host: "127.0.0.1", port: 8000, endpoint: "/v1/completions", backend: "openai",
			numPrompts: 1000, rate: math.Inf(1), burstiness: 1, dataset: "random",
			inputLen: 1024, outputLen: 128, stream: true, lengths: vllmLengths,
			backendAPI: func(b string) (string, string) {
				if strings.Contains(b, "chat") {
					return endpoints.Chat, ""
				}
				return endpoints.Completions, ""
			},
			portFor: func(string) int { return 8000 },
		}
	},
	options: vllmOptions(),
}

// vllmLengths: vLLM's random dataset samples uniformly from
// [L·(1−r), L·(1+r)], truncated to integers.
func vllmLengths(n int, r float64, output bool) (int, int) {
	lo, hi := int(float64(n)*(1-r)), int(float64(n)*(1+r))
	if output && lo < 1 {
		lo = 1
	}
	return lo, hi
}

func vllmOptions() []option {
	opts := []option{
		{name: "--base-url", arity: 1, apply: strField(func(d *draft) *string { return &d.baseURL })},
		{name: "--host", arity: 1, apply: strField(func(d *draft) *string { return &d.host })},
		{name: "--port", arity: 1, apply: intField(func(d *draft) *int { return &d.port })},
		{name: "--endpoint", arity: 1, apply: strField(func(d *draft) *string { return &d.endpoint })},
		{name: "--backend", arity: 1, apply: strField(func(d *draft) *string { return &d.backend })},
		{name: "--model", arity: 1, apply: strField(func(d *draft) *string { return &d.model })},
		{name: "--served-model-name", arity: 1, apply: strField(func(d *draft) *string { return &d.model })},
		{name: "--header", arity: many, apply: headers},
		{name: "--seed", arity: 1, apply: seed},
		{name: "--num-prompts", arity: 1, apply: intField(func(d *draft) *int { return &d.numPrompts })},
		{name: "--request-rate", arity: 1, apply: positive(func(d *draft) *float64 { return &d.rate })},
		{name: "--burstiness", arity: 1, apply: positive(func(d *draft) *float64 { return &d.burstiness })},
		{name: "--max-concurrency", arity: 1, apply: intField(func(d *draft) *int { return &d.maxConcurrency })},
		{name: "--num-warmups", arity: 1, apply: intField(func(d *draft) *int { return &d.warmups })},
		{name: "--dataset-name", arity: 1, apply: strField(func(d *draft) *string { return &d.dataset })},
		{name: "--dataset-path", arity: 1, apply: strField(func(d *draft) *string { return &d.datasetPath })},
		{name: "--random-input-len", arity: 1, apply: intField(func(d *draft) *int { return &d.inputLen })},
		{name: "--random-output-len", arity: 1, apply: intField(func(d *draft) *int { return &d.outputLen })},
		{name: "--input-len", arity: 1, apply: intField(func(d *draft) *int { return &d.inputLen })},
		{name: "--output-len", arity: 1, apply: func(d *draft, v []string) error {
			if err := scanInt(v[0], &d.outputLen); err != nil {
				return err
			}
			d.sharegptOut = d.outputLen
			return nil
		}},
		{name: "--random-range-ratio", arity: 1, apply: setFloat(func(d *draft) *float64 { return &d.rangeRatio })},
		{name: "--sharegpt-output-len", arity: 1, apply: intField(func(d *draft) *int { return &d.sharegptOut })},
		{name: "--ignore-eos", apply: switchOn(func(d *draft) *bool { return &d.ignoreEOS }, true)},
		{name: "--extra-body", arity: 1, apply: jsonObject},
		{name: "--chat-template-kwargs", arity: 1, apply: func(d *draft, v []string) error {
			return jsonObject(d, []string{`{"chat_template_kwargs": ` + v[0] + `}`})
		}},
		{name: "--temperature", arity: 1, apply: bodyField("temperature", false)},
		{name: "--top-p", arity: 1, apply: bodyField("top_p", false)},
		{name: "--top-k", arity: 1, apply: bodyField("top_k", true)},
		{name: "--min-p", arity: 1, apply: bodyField("min_p", false)},
		{name: "--frequency-penalty", arity: 1, apply: bodyField("frequency_penalty", false)},
		{name: "--presence-penalty", arity: 1, apply: bodyField("presence_penalty", false)},
		{name: "--repetition-penalty", arity: 1, apply: bodyField("repetition_penalty", false)},
		{name: "--goodput", arity: many, apply: goodput},
		{name: "--logprobs", arity: 1, apply: bodyField("logprobs", true)},
	}
	opts = append(opts, dropAll("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 0,
		"--save-result", "--save-detailed", "--append-result", "--plot-timeline", "--plot-dataset-stats")...)
	opts = append(opts, dropAll("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 1,
		"--result-dir", "--result-filename", "--label", "--timeline-itl-thresholds")...)
	opts = append(opts, dropAll("run.json records the scenario and the host; there is no free-form metadata", many, "--metadata")...)
	opts = append(opts, dropAll("every report has the full latency distributions (p50, p90, p95, p99, p99.9, mean, max)", 1,
		"--percentile-metrics", "--metric-percentiles")...)
	opts = append(opts, dropAll("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 1,
		"--tokenizer", "--tokenizer-mode")...)
	opts = append(opts, dropAll("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 0,
		"--skip-tokenizer-init", "--skip-chat-template")...)
	opts = append(opts, dropAll("the live view is --view auto|tui|plain", 0, "--disable-tqdm")...)
	opts = append(opts, dropAll("llmbench does not drive the engine's profiler", 0, "--profile")...)
	opts = append(opts, dropAll("beam search is not a streaming chat workload llmbench models", 0, "--use-beam-search")...)
	opts = append(opts, dropAll("no side channel of probe requests: a second llmbench run at a low rate measures the same", 1, "--probe-request-rate")...)
	opts = append(opts, dropAll("llmbench names each request itself (its id in requests.jsonl)", 1, "--request-id-prefix")...)
	opts = append(opts, dropAll("no per-request LoRA choice: set the adapter as the model (--model or request.extra_body)", many, "--lora-modules")...)
	opts = append(opts, dropAll("no per-request LoRA choice: set the adapter as the model (--model or request.extra_body)", 1, "--lora-assignment")...)
	opts = append(opts, dropAll("a ramp over a request count has no time base: use workload.stages (rate targets over durations)", 1,
		"--ramp-up-strategy", "--ramp-up-start-rps", "--ramp-up-end-rps")...)
	opts = append(opts, dropAll("llmbench waits for an external engine's /v1/models itself and aborts when it is unreachable (workload.abort.unreachable)", 1, "--ready-check-timeout-sec")...)
	opts = append(opts, dropAll("TLS is always verified: add the server's CA to the system's trust store", 0, "--insecure")...)
	opts = append(opts, dropAll("a trace replay is workload.trace (mooncake, azure, burstgpt)", 0, "--self-timed", "--no-self-timed")...)
	opts = append(opts, dropAll("dataset loading detail of the tool's own loaders", 0, "--no-stream", "--no-oversample", "--disable-shuffle", "--no-reranker")...)
	opts = append(opts, dropAll("this dataset is not one llmbench has (synthetic, sharegpt, jsonl, shared_prefix, multi_turn, traces)", 1,
		"--custom-output-len", "--spec-bench-output-len", "--spec-bench-category", "--sonnet-input-len", "--sonnet-output-len",
		"--sonnet-prefix-len", "--blazedit-min-distance", "--blazedit-max-distance", "--random-batch-size",
		"--random-mm-base-items-per-request", "--random-mm-num-mm-items-range-ratio", "--random-mm-limit-mm-per-prompt",
		"--random-mm-bucket-config", "--hf-subset", "--hf-split", "--hf-name", "--hf-output-len",
		"--prefix-repetition-prefix-len", "--prefix-repetition-suffix-len", "--prefix-repetition-num-prefixes",
		"--prefix-repetition-output-len")...)
	opts = append(opts, dropAll("a fixed prefix before random prompts: workload.dataset {type: shared_prefix} shares prefixes by group instead", 1, "--random-prefix-len")...)
	return opts
}

func seed(d *draft, v []string) error {
	var n int
	if err := scanInt(v[0], &n); err != nil {
		return err
	}
	d.seed = &n
	return nil
}

func positive(p func(*draft) *float64) func(*draft, []string) error {
	set := setFloat(p)
	return func(d *draft, v []string) error {
		if err := set(d, v); err != nil {
			return err
		}
		if v := *p(d); !(v > 0) { // NaN too
			return fmt.Errorf("want a number above 0")
		}
		return nil
	}
}

// headers reads KEY=VALUE pairs into the request's headers.
func headers(d *draft, vals []string) error {
	for _, kv := range vals {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		if d.headers == nil {
			d.headers = map[string]string{}
		}
		d.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

// goodput reads vLLM's KEY:MILLISECONDS objectives (ttft, tpot, e2el) as
// the scenario's slo.
func goodput(d *draft, vals []string) error {
	names := map[string]string{"ttft": "ttft", "tpot": "tpot", "e2el": "e2e"}
	for _, pair := range vals {
		k, v, ok := strings.Cut(pair, ":")
		var ms float64
		if _, err := fmt.Sscan(v, &ms); !ok || err != nil || ms < 0 || names[k] == "" {
			return fmt.Errorf("%q: want ttft, tpot or e2el : milliseconds", pair)
		}
		if d.slo == nil {
			d.slo = map[string]time.Duration{}
		}
		d.slo[names[k]] = time.Duration(ms * float64(time.Millisecond))
	}
	return nil
}
