package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// aiperfDefaults is `aiperf profile -m M` as llmbench carries it: a burst of
// one user (no rate, no --concurrency), 10 requests, 550-token prompts, not
// streamed, to localhost:8000's chat API.
var aiperfDefaults = loaded{
	base: "http://localhost:8000/v1", endpoint: "chat", model: "m", seed: 1, concurrency: 1, requests: 10,
	prompt: "550", output: "128", ignoreEOS: false, stream: false, dataset: "synthetic",
}

const noOSL = "--output-tokens-mean (not given)"

func TestImportAIPerf(t *testing.T) {
	runCases(t, "aiperf", aiperfDefaults, []importCase{
		{name: "defaults", args: []string{"-m", "m"}, want: func(*loaded) {}, dropped: []string{noOSL}},
		// README: "Example with Custom Configuration"
		{name: "README: custom configuration",
			args: []string{"aiperf", "profile", "--model", "Qwen/Qwen3-0.6B", "--url", "http://localhost:8000", "--endpoint-type", "chat",
				"--concurrency", "10", "--request-count", "100", "--streaming"},
			want: func(l *loaded) {
				l.model, l.concurrency, l.requests, l.stream = "Qwen/Qwen3-0.6B", 10, 100, true
			}, dropped: []string{noOSL}},
		// docs/tutorials (vLLM, fixed lengths): the sequence lengths pinned by ignore_eos
		{name: "docs: fixed lengths with extra inputs",
			args: []string{"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--endpoint", "/v1/chat/completions", "--streaming",
				"--url", "localhost:8080", "--synthetic-input-tokens-mean", "100", "--synthetic-input-tokens-stddev", "0",
				"--output-tokens-mean", "200", "--output-tokens-stddev", "0", "--extra-inputs", "min_tokens:200",
				"--extra-inputs", "ignore_eos:true", "--concurrency", "4", "--request-count", "64", "--warmup-request-count", "1"},
			want: func(l *loaded) {
				l.model, l.stream, l.base, l.prompt, l.output = "Qwen/Qwen3-0.6B", true, "http://localhost:8080/v1", "100", "200"
				l.ignoreEOS, l.concurrency, l.requests, l.warmup = true, 4, 64, 1
			},
			// llmbench sends min_tokens = max_tokens itself with ignore_eos
			dropped: []string{"--extra-inputs min_tokens:200"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if len(sc.Request.ExtraBody) != 0 {
					t.Errorf("extra_body = %v, want none: ignore_eos is workload.ignore_eos", sc.Request.ExtraBody)
				}
			}},
		// docs: a rate with the default Poisson arrivals
		{name: "docs: request rate", args: []string{"--model", "m", "--endpoint-type", "chat", "--streaming",
			"--request-rate", "32", "--request-count", "64", "--url", "localhost:8000", "--osl", "50"},
			want: func(l *loaded) {
				l.concurrency, l.rate, l.arrival, l.requests, l.stream, l.output = 0, 32, "poisson", 64, true, "50"
			}},
		{name: "a constant rate capped by concurrency, for a duration",
			args: []string{"-m", "m", "--request-rate", "5", "--request-rate-mode", "CONSTANT", "--concurrency", "3",
				"--benchmark-duration", "90", "--osl", "64"},
			want: func(l *loaded) {
				l.concurrency, l.rate, l.arrival, l.maxConc, l.whenCapped = 0, 5, "constant", 3, "wait"
				l.requests, l.duration, l.output = 0, 90*time.Second, "64"
			}},
		{name: "normal lengths, completions, seed",
			args: []string{"-m", "m", "--isl", "300", "--isl-stddev", "30", "--osl", "100", "--osl-stddev", "10",
				"--endpoint-type", "completions", "--random-seed", "7"},
			want: func(l *loaded) {
				l.prompt, l.output, l.endpoint, l.seed = "300±30", "100±10", "completions", 7
			}},
		{name: "max_tokens in extra inputs is the output length",
			args: []string{"-m", "m", "--extra-inputs", "max_tokens:256,temperature:0.5"},
			want: func(l *loaded) { l.output = "256" },
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Request.ExtraBody["temperature"] != 0.5 || sc.Request.ExtraBody["max_tokens"] != nil {
					t.Errorf("extra_body = %v", sc.Request.ExtraBody)
				}
			}},
		{name: "prefix pool: a shared-prefix dataset",
			args: []string{"-m", "m", "--num-prefix-prompts", "4", "--prefix-prompt-length", "200", "--num-dataset-entries", "40", "--osl", "8"},
			want: func(l *loaded) { l.dataset, l.output = "shared_prefix", "8" },
			check: func(t *testing.T, sc scenarios.Scenario) {
				if ds := sc.Workload.Dataset; ds.Groups != 4 || ds.PrefixTokens != 200 || ds.PromptsPerGroup != 10 {
					t.Errorf("dataset = %+v, want 4 groups of 10 prompts after 200 prefix tokens", ds)
				}
			}},
		{name: "not carried over, each with its values, and the key kept out of the file",
			args: []string{"-m", "a,b", "--api-key", "sk-secret", "--tokenizer", "gpt2", "--ui", "simple", "-v",
				"--benchmark-grace-period", "5", "--benchmark-duration", "10", "--image-width-mean", "64",
				"--conversation-turn-mean", "3", "--artifact-dir", "out", "--goodput", "request_latency:250 output_token_throughput_per_user:600",
				"--osl", "16", "--num-prompts", "5"},
			want: func(l *loaded) { l.model, l.requests, l.duration, l.output = "a", 0, 10*time.Second, "16" },
			dropped: []string{"--tokenizer gpt2", "--ui simple", "-v", "--benchmark-grace-period 5", "--image-width-mean 64",
				"--conversation-turn-mean 3", "--artifact-dir out",
				"--model a,b", "--api-key …", "--goodput output_token_throughput_per_user:600", "--conversation-num 5"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.SLO == nil || sc.SLO.E2E != 250*time.Millisecond {
					t.Errorf("slo = %+v, want e2e 250ms", sc.SLO)
				}
				if sc.Engine.APIKeyEnv != "OPENAI_API_KEY" {
					t.Errorf("api_key_env = %q", sc.Engine.APIKeyEnv)
				}
			}},
		{name: "headers and goodput objectives",
			args: []string{"-m", "m", "-H", "x-a:1", "x-b:two", "--header", `{"x-c": "3"}`, "--osl", "4",
				"--goodput", "time_to_first_token:100 inter_token_latency:10", "--request-timeout-seconds", "2.5"},
			want: func(l *loaded) { l.output = "4" },
			check: func(t *testing.T, sc scenarios.Scenario) {
				h := sc.Request.Headers
				if h["x-a"] != "1" || h["x-b"] != "two" || h["x-c"] != "3" {
					t.Errorf("headers = %v", h)
				}
				if sc.SLO == nil || sc.SLO.TTFT != 100*time.Millisecond || sc.SLO.TPOT != 10*time.Millisecond {
					t.Errorf("slo = %+v", sc.SLO)
				}
				if sc.Workload.Timeout != 2500*time.Millisecond {
					t.Errorf("timeout = %v", sc.Workload.Timeout)
				}
			}},
		{name: "an endpoint type llmbench does not measure", args: []string{"-m", "m", "--endpoint-type", "embeddings", "--osl", "4"},
			want: func(l *loaded) { l.output = "4" }, dropped: []string{"--endpoint-type embeddings"}},
	})
}

// A mooncake trace is replayed by its timestamps, as AIPerf's fixed schedule.
func TestImportAIPerfTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 4, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import("aiperf", []string{"-m", "m", "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--osl", "4"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), res.YAML)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.YAML)
	}
	if tr := sc.Workload.Trace; tr == nil || tr.Format != "mooncake" || tr.Path != trace || sc.Workload.Requests != 0 {
		t.Errorf("trace = %+v, requests %d\n%s", tr, sc.Workload.Requests, res.YAML)
	}
}

func TestImportAIPerfRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-n", "m"}, "has no option --model-n"}, // cyclopts takes whole names
		{[]string{"-m", "m", "--request-count", "5", "--benchmark-duration", "10"}, "cannot be used together"},
		{[]string{"-m", "m", "--benchmark-duration", "0.5"}, "at least 1"},
		{[]string{"-m", "m", "--request-rate-mode", "bursty"}, "want constant or poisson"},
		{[]string{"-m", "m", "--request-rate", "2", "--request-rate-mode", "concurrency_burst"}, "cannot be used with --request-rate"},
		{[]string{"-m", "m", "--extra-inputs", "url:http://x"}, "want NAME:VALUE"},
		{[]string{"-m", "m", "--extra-inputs", "ignore_eos:maybe"}, "want true or false"},
		{[]string{"-m", "m", "--goodput", "ttft"}, "want METRIC:VALUE"},
		{[]string{"-m", "m", "--custom-dataset-type", "single_turn"}, "needs --input-file"},
		{[]string{"-m", "m", "--streaming=true"}, "takes no value"},
		{[]string{"-m", "m", "--fixed-schedule"}, "needs --input-file"},
	} {
		_, err := Import("aiperf", c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import aiperf %q: err = %v, want %q", c.args, err, c.want)
		}
	}
}
