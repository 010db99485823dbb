package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engines"
)

// InitKinds are the engines `llmbench init --engine` writes a scenario for:
// the launchable families (llmbench starts them), an engine already
// running (external) and the built-in simulated one (sim).
var InitKinds = []string{engines.SGLang, engines.VLLM, engines.LlamaCpp, engines.FastDeploy, KindExternal, KindSim}

// DefaultInitURL is the engine an external scenario from init points at
// when no --url is given.
const DefaultInitURL = "http://127.0.0.1:8000/v1"

// InitOptions say which scenario Init writes.
type InitOptions struct {
	Engine string // one of InitKinds; "" = sim
	URL    string // external only: the engine's URL (root or /v1); "" = DefaultInitURL
}

// Init is a commented scenario for o's engine: every section a user edits,
// each key with what it does and its default, loadable as it stands
// (docs/decisions/0055).
func Init(o InitOptions) ([]byte, error) {
	kind := o.Engine
	if kind == "" {
		kind = KindSim
	}
	known := false
	for _, k := range InitKinds {
		known = known || k == kind
	}
	if !known {
		return nil, fmt.Errorf("--engine %q: want %s", kind, strings.Join(InitKinds, ", "))
	}
	if o.URL != "" && kind != KindExternal {
		return nil, errors.New("--url is for --engine external (a launched or built-in engine's URL is llmbench's to choose)")
	}
	url := o.URL
	if url == "" {
		url = DefaultInitURL
	} else if base, ok := endpoints.APIBase(url); ok {
		url = base
	}
	data := initData{
		Kind: kind, Name: kind, URL: literal(url), Launched: kind != KindExternal && kind != KindSim,
		PromptTokens: DefaultPromptTokens, OutputTokens: DefaultOutputTokens, Seed: DefaultSeed,
		Scrape: DefaultScrapeInterval.String(), Timeout: "30m", Stall: "5m",
		Endpoints: strings.Join(endpoints.Names()[1:], ", "),
	}
	var buf bytes.Buffer
	if err := initTemplate.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteInit writes data to path, refusing to replace an existing file
// unless force: a scenario someone edited is not init's to lose.
func WriteInit(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: not overwritten (--force replaces it)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type initData struct {
	Kind, Name, URL        string
	Launched               bool
	PromptTokens           int
	OutputTokens           int
	Seed                   int
	Scrape, Timeout, Stall string
	Endpoints              string // the registered endpoints but the default, in the registry's order
}

// initTemplate is the one text every engine's scenario shares; only the
// engine section differs. Defaults named in comments come from the
// constants above (a comment cannot drift from the code it describes).
var initTemplate = template.Must(template.New("init").Parse(`# A scenario for llmbench, written by ` + "`llmbench init --engine {{.Kind}}`" + `.
# Check it:  llmbench validate FILE     Preview:  llmbench plan FILE
# Run it:    llmbench run FILE          Every key: scenarios/README.md
name: {{.Name}}            # names the run directory (letters, digits, . _ -)
seed: {{.Seed}}                  # every random choice (lengths, prompts, arrivals) follows it (default {{.Seed}})
{{- if .Launched}}
model: ${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}   # the model the engine loads and requests name
{{- else if eq .Kind "external"}}
# model: my-model        # the model requests name (default: the one /v1/models lists)
{{- end}}

engine:
{{- if eq .Kind "sim"}}
  kind: sim              # the built-in simulated engine on a free loopback port: no GPU needed
  dialect: sglang        # the /metrics it exposes: sglang (default), vllm, fastdeploy or llamacpp
  # preset: tiny         # its performance model (default: the model's default preset)
  # process: separate    # separate (default): a child process; inline: inside llmbench
{{- else if eq .Kind "external"}}
  kind: external         # an engine that is already running
  base_url: ${ENGINE_URL:-{{.URL}}}   # its OpenAI API root (…/v1); ENGINE_URL overrides
  api_key_env: ENGINE_API_KEY         # the variable holding the API key, sent as a bearer token when set
  # metrics_url: http://127.0.0.1:8000/metrics   # default: /metrics beside the API, when there is one
  # dialect: vllm        # the metrics' dialect (default: detected from /metrics)
{{- else}}
  kind: launch           # llmbench starts the engine, waits until it answers, and stops it after the run
  launch:
    kind: {{.Kind}}           # its default command line, on 127.0.0.1 and a free port
{{- if eq .Kind "llamacpp"}}
    model: ${GGUF:-models/model.gguf}   # the GGUF file llama-server loads (default: the scenario's model)
{{- end}}
    # extra: [--max-model-len, "8192"]   # arguments appended to the engine's command line (default none)
    # env: [CUDA_VISIBLE_DEVICES=0]      # added to the engine's environment (default none)
    ready_timeout: 10m   # how long loading may take before the run gives up (default 10m)
{{- end}}

workload:
  # The load: one of
  concurrency: 8         #   closed loop: N users, each sending its next request when its last one ends
  # rate: 4              #   open loop: R requests per second …
  # arrival: poisson     #   … poisson (default), constant, or gamma (with cv: burstier above 1)
  # max_concurrency: 64  #   an open loop's cap on requests in flight (default none)
  # sweep: {rates: [1, 2, 4, 8]}   #   or one measured phase per load point
  # The length of the measured phase: duration, requests, or both (whichever comes first).
  duration: 30s
  # requests: 500
  warmup: {requests: 8}  # sent first, not measured (default: no warmup)
  # Request lengths in tokens: a number, or {dist: uniform, min, max},
  # {dist: lognormal, mean, stddev, min, max}, …
  prompt_tokens: {{.PromptTokens}}     # default {{.PromptTokens}}
  output_tokens: {{.OutputTokens}}     # sent as max_tokens; default {{.OutputTokens}}
  ignore_eos: true       # ask for exactly max_tokens (default true)
  # dataset: {type: sharegpt, path: ShareGPT_V3_unfiltered_cleaned_split.json}   # default: synthetic prompts
  timeout: {{.Timeout}}            # one request, its whole stream included (default {{.Timeout}}; 0s: none)
  stall_timeout: {{.Stall}}       # nothing received for this long ends a request (default {{.Stall}})
  abort:
    error_rate: 0.2      # stop when more than 20 % of finished requests failed (default: never)

request:
  endpoint: chat         # chat (default); or {{.Endpoints}}
  stream: true           # stream the answer (default true); false measures E2E only
  # extra_body: {temperature: 0}   # merged into every request's JSON body
  # headers: {X-Route: a}          # sent with every request

# Objectives each request is judged against (goodput, the verdict); default none.
slo: {ttft: 2s, tpot: 100ms}

scrape:
  interval: {{.Scrape}}          # how often the engine's /metrics is read (default {{.Scrape}})

# gates:                 # CI pass/fail: ` + "`llmbench run`" + ` exits 3 when one fails
#   thresholds: ["client.ttft.p99 < 2s"]
`))
