package importer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// loaded is what a test checks of an imported scenario, read back through
// the scenario loader (so every default and every validation applies).
type loaded struct {
	base, endpoint, model, arrival, whenCapped string
	seed                                       int64
	concurrency, maxConc, requests, warmup     int
	rate, cv                                   float64
	duration                                   time.Duration
	prompt, output                             string // "N", "lo..hi" or "mean±stddev[lo..hi]"
	ignoreEOS, stream                          bool
	dataset                                    string
}

func load(t *testing.T, data []byte, dir string) (loaded, scenarios.Scenario) {
	t.Helper()
	sc, err := scenarios.Parse(filepath.Join(dir, "imported.yaml"), data)
	if err != nil {
		t.Fatalf("the imported scenario does not load: %v\n%s", err, data)
	}
	w := sc.Workload
	length := func(l scenarios.Length) string {
		switch l.Dist {
		case scenarios.DistUniform:
			return fmt.Sprintf("%d..%d", l.Min, l.Max)
		case scenarios.DistNormal:
			s := fmt.Sprintf("%g±%g", l.Mean, l.StdDev)
			if l.Min != 1 || l.Max != 0 {
				s += fmt.Sprintf("[%d..%d]", l.Min, l.Max)
			}
			return s
		}
		return fmt.Sprint(l.Value)
	}
	l := loaded{
		base: sc.Engine.BaseURL, endpoint: sc.Request.Endpoint, model: sc.Model, seed: sc.Seed,
		concurrency: w.Concurrency, rate: w.Rate, arrival: w.Arrival, cv: math.Round(w.CV*1000) / 1000,
		maxConc: w.MaxConcurrency, whenCapped: w.WhenCapped, requests: w.Requests, duration: w.Duration,
		prompt: length(w.Prompt), output: length(w.Output), ignoreEOS: *w.IgnoreEOS,
		stream: sc.Request.Streamed(), dataset: w.Dataset.Type,
	}
	if w.Warmup != nil {
		l.warmup = w.Warmup.Requests
	}
	if l.endpoint == "" {
		l.endpoint = "chat"
	}
	return l, sc
}

// vllmDefaults is `vllm bench serve` with no options, as llmbench carries it.
var vllmDefaults = loaded{
	base: "http://127.0.0.1:8000/v1", endpoint: "completions", seed: 1, concurrency: 1000, requests: 1000,
	prompt: "1024", output: "128", ignoreEOS: false, stream: true, dataset: "synthetic",
}

var sglangDefaults = loaded{
	base: "http://127.0.0.1:30000/v1", endpoint: "completions", seed: 1, concurrency: 1000, requests: 1000,
	warmup: 1, prompt: "1..1024", output: "1..1024", ignoreEOS: true, stream: true, dataset: "synthetic",
}

type importCase struct {
	name    string
	args    []string
	want    func(l *loaded)
	dropped []string // the options not carried over, in order
	check   func(t *testing.T, sc scenarios.Scenario)
}

func TestImportVLLM(t *testing.T) {
	runCases(t, "vllm", vllmDefaults, []importCase{
		{name: "defaults", want: func(*loaded) {}},
		{name: "the command itself pasted", args: []string{"vllm", "bench", "serve", "--num-prompts", "5"},
			want: func(l *loaded) { l.requests, l.concurrency = 5, 5 }},
		{name: "max concurrency at an infinite rate is a closed loop", args: []string{"--max-concurrency", "8", "--num-prompts", "100"},
			want: func(l *loaded) { l.concurrency, l.requests = 8, 100 }},
		{name: "a rate: poisson", args: []string{"--request-rate=2.5"},
			want: func(l *loaded) { l.concurrency, l.rate, l.arrival = 0, 2.5, "poisson" }},
		{name: "burstiness is gamma with cv 1/sqrt(b), capped by max concurrency",
			args: []string{"--request-rate", "4", "--burstiness", "0.25", "--max-concurrency", "16"},
			want: func(l *loaded) {
				l.concurrency, l.rate, l.arrival, l.cv, l.maxConc, l.whenCapped = 0, 4, "gamma", 2, 16, "wait"
			}},
		{name: "burstiness without a rate", args: []string{"--burstiness", "2"}, want: func(*loaded) {},
			dropped: []string{"--burstiness 2"}},
		{name: "random lengths and range", args: []string{"--random-input-len", "100", "--random-output-len", "40", "--random-range-ratio", "0.5"},
			want: func(l *loaded) { l.prompt, l.output = "50..150", "20..60" }},
		{name: "general lengths", args: []string{"--input-len", "300", "--output-len", "30"},
			want: func(l *loaded) { l.prompt, l.output = "300", "30" }},
		{name: "base url and chat endpoint", args: []string{"--base-url", "http://gpu:9000", "--endpoint", "/v1/chat/completions", "--backend", "openai-chat"},
			want: func(l *loaded) { l.base, l.endpoint = "http://gpu:9000/v1", "chat" }},
		{name: "the Messages endpoint", args: []string{"--base-url", "http://gpu:9000", "--endpoint", "/v1/messages"},
			want: func(l *loaded) { l.base, l.endpoint = "http://gpu:9000/v1", "messages" }},
		{name: "host and port", args: []string{"--host", "10.1.2.3", "--port", "9001"},
			want: func(l *loaded) { l.base = "http://10.1.2.3:9001/v1" }},
		{name: "an endpoint llmbench does not send", args: []string{"--endpoint", "/v1/embeddings"}, want: func(*loaded) {},
			dropped: []string{"--backend openai"}},
		{name: "model, served name, seed, ignore eos", args: []string{"--model", "org/m", "--seed", "7", "--ignore-eos"},
			want: func(l *loaded) { l.model, l.seed, l.ignoreEOS = "org/m", 7, true }},
		{name: "served model name wins as the API's name", args: []string{"--model", "org/m", "--served-model-name", "m"},
			want: func(l *loaded) { l.model = "m" }},
		{name: "sharegpt file", args: []string{"--dataset-name", "sharegpt", "--dataset-path", "SHAREGPT", "--sharegpt-output-len", "64"},
			want: func(l *loaded) { l.dataset, l.output, l.prompt = "sharegpt", "64", "0" }},
		{name: "sharegpt without a file", args: []string{"--dataset-name", "sharegpt"}, want: func(*loaded) {},
			dropped: []string{"--dataset-name sharegpt"}},
		{name: "a dataset llmbench lacks", args: []string{"--dataset-name", "sonnet", "--dataset-path", "x.txt", "--sonnet-input-len", "100"},
			want:    func(*loaded) {},
			dropped: []string{"--sonnet-input-len 100", "--dataset-name sonnet", "--dataset-path x.txt"}},
		{name: "an abbreviation, as argparse reads one", args: []string{"--num-p", "3"},
			want: func(l *loaded) { l.requests, l.concurrency = 3, 3 }},
		{name: "warmups", args: []string{"--num-warmups", "4"}, want: func(l *loaded) { l.warmup = 4 }},
		{name: "what is not carried over, each listed with its values",
			args: []string{"--save-result", "--result-dir", "out", "--metadata", "a=1", "b=2", "--tokenizer", "t", "--profile",
				"--disable-tqdm", "--percentile-metrics", "ttft", "--ramp-up-strategy", "linear", "--random-prefix-len", "10", "--insecure",
				"--lora-modules", "x", "y", "--num-prompts", "9"},
			want: func(l *loaded) { l.requests, l.concurrency = 9, 9 },
			dropped: []string{"--save-result", "--result-dir out", "--metadata a=1 b=2", "--tokenizer t", "--profile", "--disable-tqdm",
				"--percentile-metrics ttft", "--ramp-up-strategy linear", "--random-prefix-len 10", "--insecure", "--lora-modules x y"}},
		{name: "headers, body, sampling, goodput",
			args: []string{"--header", "x-a=1", "x-b=two", "--extra-body", `{"chat_template_kwargs":{"enable_thinking":false}}`,
				"--temperature", "0.5", "--top-k", "5", "--goodput", "ttft:500", "tpot:50", "e2el:3000"},
			want: func(*loaded) {},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Request.Headers["x-a"] != "1" || sc.Request.Headers["x-b"] != "two" {
					t.Errorf("headers = %v", sc.Request.Headers)
				}
				b := sc.Request.ExtraBody
				if b["temperature"] != 0.5 || fmt.Sprint(b["top_k"]) != "5" || b["chat_template_kwargs"] == nil {
					t.Errorf("extra_body = %v", b)
				}
				if sc.SLO == nil || sc.SLO.TTFT != 500*time.Millisecond || sc.SLO.TPOT != 50*time.Millisecond || sc.SLO.E2E != 3*time.Second {
					t.Errorf("slo = %+v", sc.SLO)
				}
			}},
		{name: "an extra body with members llmbench sets itself",
			args:    []string{"--extra-body", `{"max_tokens":64,"ignore_eos":true,"model":"x","max_output_tokens":9,"top_p":0.9}`},
			want:    func(l *loaded) { l.output, l.ignoreEOS = "64", true },
			dropped: []string{"--extra-body max_output_tokens:9", "--extra-body model:x"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if b := sc.Request.ExtraBody; len(b) != 1 || b["top_p"] != 0.9 {
					t.Errorf("extra_body = %v, want only top_p", b)
				}
			}},
	})
}

func TestImportSGLang(t *testing.T) {
	native, sharegpt := "--backend sglang", "--dataset-name sharegpt"
	runCases(t, "sglang", sglangDefaults, []importCase{
		{name: "defaults", want: func(*loaded) {}, dropped: []string{native, sharegpt}},
		{name: "python -m pasted, an OpenAI chat backend on its port", args: []string{"python3", "-m", "sglang.bench_serving", "--backend", "sglang-oai-chat", "--port", "8080"},
			want: func(l *loaded) { l.endpoint, l.base = "chat", "http://127.0.0.1:8080/v1" }, dropped: []string{sharegpt}},
		{name: "the vllm backend's default port", args: []string{"--backend", "vllm", "--host", "0.0.0.0"},
			want: func(l *loaded) { l.base = "http://127.0.0.1:8000/v1" }, dropped: []string{sharegpt}},
		{name: "random lengths sampled from [L·r, L]",
			args: []string{"--backend", "sglang-oai", "--dataset-name", "random", "--random-input-len", "100", "--random-output-len", "40", "--random-range-ratio", "0.5"},
			want: func(l *loaded) { l.prompt, l.output = "50..100", "20..40" }},
		{name: "range ratio 1 is fixed", args: []string{"--backend", "sglang-oai", "--dataset-name", "random", "--random-range-ratio", "1"},
			want: func(l *loaded) { l.prompt, l.output = "1024", "1024" }},
		{name: "rate, cap, seed, eos, stream",
			args: []string{"--backend", "sglang-oai", "--dataset-name", "random", "--request-rate", "3", "--max-concurrency", "4",
				"--seed", "9", "--disable-ignore-eos", "--disable-stream", "--warmup-requests", "0"},
			want: func(l *loaded) {
				l.concurrency, l.rate, l.arrival, l.maxConc, l.whenCapped = 0, 3, "poisson", 4, "wait"
				l.seed, l.ignoreEOS, l.stream, l.warmup = 9, false, false, 0
			}},
		{name: "a ShareGPT file and its output length", args: []string{"--backend", "sglang-oai", "--dataset-path", "SHAREGPT", "--sharegpt-output-len", "32"},
			want: func(l *loaded) { l.dataset, l.prompt, l.output = "sharegpt", "0", "32" }},
		{name: "not carried over",
			args: []string{"--backend", "sglang-oai", "--dataset-name", "random", "--output-file", "o.jsonl", "--tokenizer", "t",
				"--flush-cache", "--lora-name", "a", "b", "--gsp-num-groups", "4", "--profile"},
			want:    func(*loaded) {},
			dropped: []string{"--output-file o.jsonl", "--tokenizer t", "--flush-cache", "--lora-name a b", "--gsp-num-groups 4", "--profile"}},
		{name: "the body", args: []string{"--backend", "sglang-oai", "--dataset-name", "random", "--extra-request-body", `{"top_p": 0.9}`, "--return-logprob"},
			want: func(*loaded) {},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Request.ExtraBody["top_p"] != 0.9 || sc.Request.ExtraBody["logprobs"] != true {
					t.Errorf("extra_body = %v", sc.Request.ExtraBody)
				}
			}},
	})
}

func runCases(t *testing.T, tool string, defaults loaded, cases []importCase) {
	dir := t.TempDir()
	sharegpt := filepath.Join(dir, "sharegpt.json")
	if err := os.WriteFile(sharegpt, []byte(`[{"conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello you"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := slices.Clone(c.args)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "SHAREGPT", sharegpt)
			}
			res, err := Import(tool, args)
			if err != nil {
				t.Fatal(err)
			}
			got, sc := load(t, res.YAML, dir)
			want := defaults
			c.want(&want)
			if got != want {
				t.Errorf("scenario:\n got %+v\nwant %+v\n%s", got, want, res.YAML)
			}
			var options []string
			for _, d := range res.Dropped {
				options = append(options, d.Option)
				if d.Why == "" {
					t.Errorf("%s dropped without a why", d.Option)
				}
				if !strings.Contains(string(res.YAML), "#   "+d.String()) {
					t.Errorf("%s is not listed in the file's header", d.Option)
				}
			}
			if !slices.Equal(options, c.dropped) {
				t.Errorf("not carried over = %q, want %q", options, c.dropped)
			}
			if c.check != nil {
				c.check(t, sc)
			}
		})
	}
}

// Errors: what the tool itself would refuse is refused, never skipped.
func TestImportRefuses(t *testing.T) {
	for _, c := range []struct {
		tool string
		args []string
		want string
	}{
		{"vllm", []string{"--no-such-option"}, "has no option --no-such-option"},
		{"vllm", []string{"--num-prompts", "x"}, "want an integer"},
		{"vllm", []string{"--num-prompts"}, "needs a value"},
		{"vllm", []string{"--dataset", "random"}, "ambiguous"},
		{"vllm", []string{"--ignore-eos=1"}, "takes no value"},
		{"vllm", []string{"--model", "m", "stray"}, `"stray" is not an option`},
		{"vllm", []string{"--burstiness", "0"}, "above 0"},
		{"vllm", []string{"--request-rate", "-3"}, "above 0"},
		{"sglang", []string{"--request-rate", "nan"}, "above 0"},
		{"vllm", []string{"--goodput", "ttft=5"}, "want ttft, tpot or e2el"},
		{"vllm", []string{"--header", "novalue"}, "KEY=VALUE"},
		{"vllm", []string{"--extra-body", "[1]"}, "JSON object"},
		{"sglang", []string{"--burstiness", "2"}, "has no option --burstiness"},
		{"k6", nil, "want aiperf or guidellm or sglang or vllm"},
	} {
		_, err := Import(c.tool, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import %s %q: err = %v, want %q", c.tool, c.args, err, c.want)
		}
	}
}

// Every option in a tool's table is unique, and each not carried over says why.
func TestOptionTables(t *testing.T) {
	for name, tl := range tools {
		seen := map[string]bool{}
		for _, o := range tl.options {
			if seen[o.name] {
				t.Errorf("%s: %s twice", name, o.name)
			}
			seen[o.name] = true
			if o.apply == nil && o.why == "" {
				t.Errorf("%s: %s not carried over without a why", name, o.name)
			}
		}
	}
}

// A relative --dataset-path is the working directory's, as the tool reads
// it, wherever the scenario file is written.
func TestImportRelativeDataset(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sg.json"), []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	res, err := Import("vllm", []string{"--dataset-name", "sharegpt", "--dataset-path", "sg.json"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "elsewhere.yaml"), res.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "sg.json"); sc.Workload.Dataset.Path != want {
		t.Errorf("dataset path = %q, want %q", sc.Workload.Dataset.Path, want)
	}
}
