package importer

import (
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/endpoints"
)

// sglangTool is `python -m sglang.bench_serving`, as defined by the
// ArgumentParser at the end of python/sglang/bench_serving.py
// (sgl-project/sglang, read at commit 0033168f).
var sglangTool = tool{
	command:  "python -m sglang.bench_serving",
	prefixes: []string{"python", "python3", "-m", "sglang.bench_serving"},
	defaults: func() *draft {
		return &draft{
			host: "127.0.0.1", backend: "sglang", numPrompts: 1000, rate: math.Inf(1), burstiness: 1,
			dataset: "sharegpt", inputLen: 1024, outputLen: 1024, ignoreEOS: true, stream: true,
			warmups: 1, lengths: sglangLengths, backendAPI: sglangAPI, portFor: sglangPort,
			seed: ptr(1),
		}
	},
	options: sglangOptions(),
}

func ptr[T any](v T) *T { return &v }

// sglangLengths: SGLang's random dataset samples uniformly from
// [L·r, L] (the prompt at least 1 token).
func sglangLengths(n int, r float64, _ bool) (int, int) {
	return max(int(float64(n)*r), 1), n
}

// sglangPort is the port bench_serving assumes for each backend.
func sglangPort(backend string) int {
	switch backend {
	case "lmdeploy":
		return 23333
	case "vllm", "trt":
		return 8000
	case "gserver":
		return 9988
	case "truss":
		return 8080
	}
	return 30000
}

// sglangAPI: the -chat backends send chat, the OpenAI ones completions;
// SGLang's native /generate and the other engines' own APIs are not
// OpenAI's, and are sent to completions instead.
func sglangAPI(backend string) (string, string) {
	switch {
	case strings.HasSuffix(backend, "-chat"):
		return endpoints.Chat, ""
	case backend == "sglang-oai" || backend == "vllm" || backend == "lmdeploy":
		return endpoints.Completions, ""
	case backend == "sglang" || backend == "sglang-native":
		return endpoints.Completions, "SGLang's native /generate API: llmbench sends the OpenAI API, to SGLang's /v1/completions (--backend sglang-oai)"
	}
	return endpoints.Completions, "this backend's own API: llmbench sends the OpenAI API, completions"
}

func sglangOptions() []option {
	opts := []option{
		{name: "--backend", arity: 1, apply: strField(func(d *draft) *string { return &d.backend })},
		{name: "--base-url", arity: 1, apply: strField(func(d *draft) *string { return &d.baseURL })},
		{name: "--host", arity: 1, apply: func(d *draft, v []string) error {
			d.host = v[0]
			if d.host == "0.0.0.0" { // its default: this machine, as a client reads it
				d.host = "127.0.0.1"
			}
			return nil
		}},
		{name: "--port", arity: 1, apply: intField(func(d *draft) *int { return &d.port })},
		{name: "--dataset-name", arity: 1, apply: strField(func(d *draft) *string { return &d.dataset })},
		{name: "--dataset-path", arity: 1, apply: strField(func(d *draft) *string { return &d.datasetPath })},
		{name: "--model", arity: 1, apply: strField(func(d *draft) *string { return &d.model })},
		{name: "--num-prompts", arity: 1, apply: intField(func(d *draft) *int { return &d.numPrompts })},
		{name: "--sharegpt-output-len", arity: 1, apply: intField(func(d *draft) *int { return &d.sharegptOut })},
		{name: "--random-input-len", arity: 1, apply: intField(func(d *draft) *int { return &d.inputLen })},
		{name: "--random-output-len", arity: 1, apply: intField(func(d *draft) *int { return &d.outputLen })},
		{name: "--random-range-ratio", arity: 1, apply: setFloat(func(d *draft) *float64 { return &d.rangeRatio })},
		{name: "--request-rate", arity: 1, apply: positive(func(d *draft) *float64 { return &d.rate })},
		{name: "--max-concurrency", arity: 1, apply: intField(func(d *draft) *int { return &d.maxConcurrency })},
		{name: "--disable-stream", apply: switchOn(func(d *draft) *bool { return &d.stream }, false)},
		{name: "--seed", arity: 1, apply: seed},
		{name: "--disable-ignore-eos", apply: switchOn(func(d *draft) *bool { return &d.ignoreEOS }, false)},
		{name: "--extra-request-body", arity: 1, apply: jsonObject},
		{name: "--warmup-requests", arity: 1, apply: intField(func(d *draft) *int { return &d.warmups })},
		{name: "--return-logprob", apply: func(d *draft, _ []string) error { return jsonObject(d, []string{`{"logprobs": true}`}) }},
	}
	opts = append(opts, dropAll("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 1, "--output-file")...)
	opts = append(opts, dropAll("llmbench writes every run to its own directory (--output-dir) with summary.json, requests.jsonl and report.html", 0, "--output-details")...)
	opts = append(opts, dropAll("the live view is --view auto|tui|plain", 0, "--disable-tqdm")...)
	opts = append(opts, dropAll("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 1, "--tokenizer")...)
	opts = append(opts, dropAll("llmbench counts tokens by the engine's usage and calibrates prompts with the engine's own tokenizer", 0, "--tokenize-prompt", "--apply-chat-template")...)
	opts = append(opts, dropAll("ShareGPT conversations are kept whatever their length; set workload.prompt_tokens bounds instead", 1, "--sharegpt-context-len")...)
	opts = append(opts, dropAll("llmbench does not drive the engine's profiler", 0, "--profile")...)
	opts = append(opts, dropAll("llmbench does not flush the engine's cache; a warmup (workload.warmup) or a fresh engine (engine.kind launch) does the same job", 0, "--flush-cache")...)
	opts = append(opts, dropAll("prefill/decode disaggregation is the server's affair; llmbench measures the endpoint it is given", 0, "--pd-separated")...)
	opts = append(opts, dropAll("no per-request LoRA choice: set the adapter as the model (--model or request.extra_body)", many, "--lora-name")...)
	opts = append(opts, dropAll("no prompt suffix: a jsonl dataset (workload.dataset) carries prompts as written", 1, "--prompt-suffix")...)
	opts = append(opts, dropAll("the generated-shared-prefix dataset is not carried over: workload.dataset {type: shared_prefix, groups, prompts_per_group} is llmbench's", 1,
		"--gsp-num-groups", "--gsp-prompts-per-group", "--gsp-system-prompt-len", "--gsp-question-len", "--gsp-output-len")...)
	return opts
}
