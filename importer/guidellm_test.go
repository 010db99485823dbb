package importer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// guidellmDefaults is GuideLLM's README quickstart as llmbench carries it:
// its default sweep (a synchronous baseline, a throughput probe of 512
// users, 8 constant rates between), 30 s per benchmark, streamed chat with
// ignore_eos, seed 42.
var guidellmDefaults = loaded{
	base: "http://localhost:8000/v1", endpoint: "chat", seed: 42, arrival: "constant", maxConc: 512, whenCapped: "wait",
	duration: 30 * time.Second, prompt: "256", output: "128", ignoreEOS: true, stream: true, dataset: "synthetic",
}

// sweepIs checks the scenario's sweep: auto points and probe, rates, or concurrencies.
func sweepIs(want string) func(t *testing.T, sc scenarios.Scenario) {
	return func(t *testing.T, sc scenarios.Scenario) {
		t.Helper()
		sw := sc.Workload.Sweep
		got := "none"
		switch {
		case sw == nil:
		case sw.Auto != nil:
			got = fmt.Sprintf("auto %d probe %d", sw.Auto.Points, sw.Auto.ProbeConcurrency)
		case sw.Rates != nil:
			got = fmt.Sprint("rates ", sw.Rates)
		default:
			got = fmt.Sprint("concurrencies ", sw.Concurrencies)
		}
		if got != want {
			t.Errorf("sweep = %s, want %s", got, want)
		}
	}
}

func TestImportGuideLLM(t *testing.T) {
	target := []string{"--target", "http://localhost:8000"}
	synth := []string{"--data", "prompt_tokens=256,output_tokens=128"}
	with := func(args ...string) []string { return slices.Concat(target, synth, args) }
	runCases(t, "guidellm", guidellmDefaults, []importCase{
		// README: quick start
		{name: "README: sweep", args: []string{"guidellm", "benchmark", "--target", "http://localhost:8000", "--profile", "sweep",
			"--max-seconds", "30", "--data", "prompt_tokens=256,output_tokens=128"},
			want: func(*loaded) {}, check: sweepIs("auto 8 probe 512")},
		// README: load patterns
		{name: "README: constant rate", args: []string{"guidellm", "benchmark", "run", "--target", "http://localhost:8000",
			"--profile", "constant", "--rate", "10", "--max-seconds", "20", "--data", "prompt_tokens=128,output_tokens=256"},
			want:  func(l *loaded) { l.rate, l.duration, l.prompt, l.output = 10, 20*time.Second, "128", "256" },
			check: sweepIs("none")},
		// README: benchmark controls (with a limit: GuideLLM would run until stopped)
		{name: "README: controls", args: with("--profile", "concurrent", "--rate", "16", "--warmup", "0.1", "--cooldown", "0.1",
			"--max-errors", "5", "--detect-saturation", "--max-seconds", "100"),
			want: func(l *loaded) {
				l.arrival, l.maxConc, l.whenCapped, l.concurrency = "", 0, "", 16
				l.duration, l.warmup = 80*time.Second, 0
			},
			dropped: []string{"--detect-saturation"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				w := sc.Workload
				if w.Warmup == nil || w.Warmup.Duration != 10*time.Second || w.Cooldown == nil || w.Cooldown.Duration != 10*time.Second {
					t.Errorf("warmup %+v cooldown %+v, want 10s each (10%% of 100s)", w.Warmup, w.Cooldown)
				}
				if w.Abort.Errors != 5 {
					t.Errorf("abort = %+v", w.Abort)
				}
			}},
		// README: the built-in chat scenario
		{name: "README: built-in chat scenario", args: []string{"--scenario", "chat", "--target", "http://localhost:8000", "--max-requests", "200"},
			want: func(l *loaded) {
				l.duration, l.requests = 0, 200
				l.prompt, l.output = "512±128[1..1024]", "256±64[1..1024]"
			}, check: sweepIs("auto 8 probe 512")},
		{name: "legacy names: rate type poisson, rates, requests, warmup requests", args: with("--rate-type", "poisson",
			"--rate", "1,2", "--rate", "4", "--max-requests", "100", "--warmup-percent", "10", "--max-seconds", "60", "--backend-type", "openai_http"),
			want: func(l *loaded) {
				l.arrival, l.requests, l.duration = "poisson", 100, 50*time.Second
			},
			dropped: []string{"--warmup/--cooldown in a sweep"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				sweepIs("rates [1 2 4]")(t, sc)
				if w := sc.Workload.Warmup; w == nil || w.Duration != 10*time.Second || w.Requests != 0 {
					t.Errorf("warmup = %+v, want 10s (a duration is preferred)", w)
				}
			}},
		{name: "warmup by requests", args: with("--profile", "synchronous", "--max-requests", "50", "--warmup", `{"value": 5, "mode": "requests"}`),
			want: func(l *loaded) {
				l.arrival, l.maxConc, l.whenCapped, l.concurrency, l.duration, l.requests, l.warmup = "", 0, "", 1, 0, 45, 5
			}},
		{name: "throughput and a sweep of concurrencies", args: with("--profile", "concurrent", "--rate", "1,8,32", "--max-seconds", "30"),
			want: func(l *loaded) { l.arrival, l.maxConc, l.whenCapped = "", 0, "" }, check: sweepIs("concurrencies [1 8 32]")},
		{name: "throughput", args: with("--profile", "throughput", "--rate", "64", "--max-seconds", "30"),
			want: func(l *loaded) { l.arrival, l.maxConc, l.whenCapped, l.concurrency = "", 0, "", 64 }},
		{name: "throughput without a rate", args: with("--profile", "throughput", "--max-seconds", "30"),
			want:    func(l *loaded) { l.arrival, l.maxConc, l.whenCapped, l.concurrency = "", 0, "", 512 },
			dropped: []string{"--profile throughput (no --rate)"}},
		{name: "a sweep of 2 is the baseline and the probe", args: with("--rate", "2", "--max-seconds", "30"),
			want: func(l *loaded) { l.arrival, l.maxConc, l.whenCapped = "", 0, "" }, check: sweepIs("concurrencies [1 512]")},
		{name: "lengths: stdev bounds, uniform, JSON; completions; seed; model",
			args: []string{"--target", "http://gpu:9000/v1", "--data", `{"prompt_tokens": 100, "prompt_tokens_stdev": 10, "output_tokens": 50, "output_tokens_min": 20, "output_tokens_max": 80}`,
				"--request-type", "text_completions", "--random-seed", "3", "--model", "org/m", "--profile", "constant", "--rate", "2", "--max-seconds", "30"},
			want: func(l *loaded) {
				l.base, l.prompt, l.output, l.endpoint, l.seed, l.model, l.rate = "http://gpu:9000/v1", "100±10[50..150]", "20..80", "completions", 3, "org/m", 2
			}},
		{name: "shared prefix", args: []string{"--target", "http://localhost:8000", "--data", "prompt_tokens=64,output_tokens=8,prefix_tokens=512,prefix_count=4",
			"--profile", "synchronous", "--max-requests", "40"},
			want: func(l *loaded) {
				l.arrival, l.maxConc, l.whenCapped, l.concurrency, l.duration, l.requests = "", 0, "", 1, 0, 40
				l.dataset, l.prompt, l.output = "shared_prefix", "64", "8"
			},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if ds := sc.Workload.Dataset; ds.Groups != 4 || ds.PrefixTokens != 512 || ds.PromptsPerGroup != 10 {
					t.Errorf("dataset = %+v", ds)
				}
			}},
		{name: "backend kwargs: stream, timeout, extras; the key kept out",
			args: with("--max-seconds", "30", "--backend-kwargs",
				`{"api_key": "sk-x", "stream": false, "timeout": 90, "http2": false, "extras": {"headers": {"x-a": "1"}, "body": {"temperature": 0.2, "ignore_eos": false}}}`),
			want:    func(l *loaded) { l.stream, l.ignoreEOS = false, false },
			dropped: []string{"--backend-kwargs api_key …", "--backend-kwargs http2=false"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Request.Headers["x-a"] != "1" || sc.Request.ExtraBody["temperature"] != 0.2 || sc.Workload.Timeout != 90*time.Second {
					t.Errorf("headers %v body %v timeout %v", sc.Request.Headers, sc.Request.ExtraBody, sc.Workload.Timeout)
				}
				if strings.Contains(fmt.Sprint(sc.Request.Headers, sc.Request.ExtraBody), "sk-x") {
					t.Error("the key is in the scenario")
				}
			}},
		{name: "not carried over", args: with("--max-seconds", "30", "--processor", "gpt2", "--outputs", "json,html", "--disable-progress",
			"--rampup", "5", "--data", "more.jsonl", "--request-format", "/v1/audio/transcriptions", "--max-error-rate", "0.2"),
			want: func(*loaded) {},
			dropped: []string{"--processor gpt2", "--outputs json,html", "--disable-progress",
				"--data more.jsonl", "--rampup 5", "--request-format /v1/audio/transcriptions"},
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Workload.Abort.ErrorRate != 0.2 {
					t.Errorf("abort = %+v", sc.Workload.Abort)
				}
			}},
		{name: "https: GuideLLM verifies no certificate unless told", args: []string{"--target", "https://api.example.com/v1",
			"--data", "prompt_tokens=256,output_tokens=128", "--max-seconds", "30", "--backend-kwargs", "timeout=5,follow_redirects=false"},
			want: func(l *loaded) { l.base = "https://api.example.com/v1" },
			check: func(t *testing.T, sc scenarios.Scenario) {
				if sc.Workload.Timeout != 5*time.Second {
					t.Errorf("timeout = %v", sc.Workload.Timeout)
				}
			},
			dropped: []string{"--backend-kwargs follow_redirects=false", "--backend-kwargs verify (not true)"}},
		{name: "https with verify", args: []string{"--target", "https://api.example.com", "--data", "prompt_tokens=256,output_tokens=128",
			"--max-seconds", "30", "--backend-kwargs", `{"verify": true}`},
			want: func(l *loaded) { l.base = "https://api.example.com/v1" }},
		{name: "the in-process vLLM backend", args: with("--backend", "vllm_python", "--max-seconds", "30"),
			want: func(*loaded) {}, dropped: []string{"--backend vllm_python"}},
		{name: "a dataset file is not read", args: []string{"--target", "http://localhost:8000", "--data", "path/to/data.json",
			"--request-type", "chat_completions", "--max-requests", "10", "--profile", "synchronous"},
			want: func(l *loaded) {
				l.arrival, l.maxConc, l.whenCapped, l.concurrency, l.duration, l.requests = "", 0, "", 1, 0, 10
			},
			dropped: []string{"--data path/to/data.json"}},
	})
}

func TestImportGuideLLMRefuses(t *testing.T) {
	base := []string{"--target", "http://h:8000", "--data", "prompt_tokens=8,output_tokens=8"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{base, "give --max-seconds or --max-requests"},
		{[]string{"--data", "prompt_tokens=8,output_tokens=8", "--max-seconds", "5"}, "--target is required"},
		{[]string{"--target", "http://h", "--max-seconds", "5"}, "--data is required"},
		{append(base, "--max-seconds", "5", "--profile", "synchronous", "--rate", "2"), "takes no --rate"},
		{append(base, "--max-seconds", "5", "--profile", "concurrent"), "needs --rate"},
		{append(base, "--max-seconds", "5", "--profile", "poisson"), "needs --rate"},
		{append(base, "--max-seconds", "5", "--profile", "burst"), "want synchronous"},
		{append(base, "--max-seconds", "5", "--rate", "1"), "at least 2 benchmarks"},
		{append(base, "--max-seconds", "5", "--rate", "x"), "want numbers above 0"},
		{append(base, "--max-seconds", "5", "--warmup", "3", "--cooldown", "2"), "leave nothing to measure"},
		{append(base, "--max-seconds", "5", "--warmup", "mode=sometimes"), "mode sometimes"},
		{append(base, "--max-requests", "10", "--warmup", `{"value": 4, "mode": "requests"}`, "--cooldown", "6"), "leave nothing to measure"},
		{append(base, "--max-seconds", "30", "--backend-kwargs", "stream=maybe"), "want true or false"},
		{append(base, "--max-seconds", "5", "--max-error-rate", "2"), "fraction"},
		{append(base, "--max-sec", "5"), "has no option --max-sec"}, // click takes whole names
		{append(base, "--max-seconds", "5", "--backend", "tgi"), "want openai_http or vllm_python"},
		{[]string{"--target", "http://h", "--data", "prompt_tokens=8,output_tokens=x", "--max-seconds", "5"}, "want a whole number"},
		{[]string{"--target", "http://h", "--data", "prompt_tokens=8,output_tokens_min=2", "--max-seconds", "5"}, "required"},
	} {
		_, err := Import("guidellm", c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import guidellm %q: err = %v, want %q", c.args, err, c.want)
		}
	}
}
