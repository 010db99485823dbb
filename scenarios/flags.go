package scenarios

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/endpoints"
)

// Flags is a scenario given on the command line (`llmbench run --url …`):
// an external engine at URL and one phase of load. A zero field was not
// given. FromFlags turns it into the scenario file it stands for and loads
// that file as any other (docs/decisions/0048).
type Flags struct {
	URL       string // the engine's API: its root (http://host:8000) or its /v1 base
	Model     string // "" = the one model the engine's /v1/models lists
	APIKeyEnv string // the environment variable holding the API key

	Concurrency int     // closed loop: this many users
	Rate        float64 // open loop: requests per second (Poisson arrivals)

	Duration time.Duration // the phase's length …
	Requests int           // … or its request count (both: whichever comes first)

	PromptTokens, OutputTokens int    // fixed lengths (synthetic prompts)
	Dataset                    string // a .jsonl (prompt or messages per line) or ShareGPT .json file
	Endpoint                   string // chat or completions
	Seed                       int64
}

// Bind defines f's flags on fs, as `llmbench run` shows them.
func (f *Flags) Bind(fs *flag.FlagSet) {
	with := func(s string) string { return "with --url: " + s }
	fs.StringVar(&f.URL, "url", "", "run without a scenario file: the engine's URL, its root or its /v1 (e.g. http://127.0.0.1:8000); needs a load and a length, below")
	fs.StringVar(&f.Model, "model", "", with("the model to request (default: the one /v1/models lists)"))
	fs.StringVar(&f.APIKeyEnv, "api-key-env", "", with("the environment variable holding the API key (sent as a bearer token)"))
	fs.IntVar(&f.Concurrency, "concurrency", 0, with("N users, each sending its next request when its last one ends"))
	fs.Float64Var(&f.Rate, "rate", 0, with("R requests per second, Poisson arrivals"))
	fs.DurationVar(&f.Duration, "duration", 0, with("how long to send (e.g. 30s)"))
	fs.IntVar(&f.Requests, "requests", 0, with("how many requests to send (with --duration: whichever comes first)"))
	fs.IntVar(&f.PromptTokens, "prompt-tokens", 0, with(fmt.Sprintf("prompt length in tokens (default %d)", DefaultPromptTokens)))
	fs.IntVar(&f.OutputTokens, "output-tokens", 0, with(fmt.Sprintf("output length in tokens, sent as max_tokens (default %d)", DefaultOutputTokens)))
	fs.StringVar(&f.Dataset, "dataset", "", with(`prompts from a file: .jsonl ({"prompt": …} or {"messages": […]} per line) or a ShareGPT .json`))
	fs.StringVar(&f.Endpoint, "endpoint", "", with(strings.Join(endpoints.Names(), ", ")+" (default "+endpoints.Default+")"))
	fs.Int64Var(&f.Seed, "seed", 0, with(fmt.Sprintf("the seed of every random choice (default %d)", DefaultSeed)))
}

// FlagsFile is the name a scenario built from flags carries in messages.
const FlagsFile = "llmbench run"

// flagFields maps a scenario field to the flag that sets it, so that an
// error in a scenario built from flags names the flag the user typed.
var flagFields = []struct{ field, flag string }{
	{"engine.base_url", "--url"},
	{"engine.api_key_env", "--api-key-env"},
	{"model", "--model"},
	{"seed", "--seed"},
	{"workload.concurrency", "--concurrency"},
	{"workload.rate", "--rate"},
	{"workload.duration", "--duration"},
	{"workload.requests", "--requests"},
	{"workload.prompt_tokens", "--prompt-tokens"},
	{"workload.output_tokens", "--output-tokens"},
	{"workload.dataset", "--dataset"},
	{"request.endpoint", "--endpoint"},
}

// FromFlags builds the scenario f describes: its YAML (YAML), decoded and
// validated by the code that loads every scenario file, with the overrides
// applied and ${VAR} in them expanded from lookup. A relative --dataset is
// the working directory's. Errors name the flag beside the field.
func FromFlags(f Flags, lookup func(string) (string, bool), overrides ...Override) (Scenario, error) {
	data, err := f.YAML()
	if err != nil {
		return Scenario{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", FlagsFile, err)
	}
	sc, err := parse(FlagsFile, data, source{dir: dir}, lookup, overrides...)
	return sc, namingFlags(err)
}

// flagDoc is the scenario file a Flags stands for, in the scenario's own
// field names; only what was given is written.
type flagDoc struct {
	Name   string `yaml:"name"`
	Seed   int64  `yaml:"seed,omitempty"`
	Model  string `yaml:"model,omitempty"`
	Engine struct {
		Kind      string `yaml:"kind"`
		BaseURL   string `yaml:"base_url"`
		APIKeyEnv string `yaml:"api_key_env,omitempty"`
	} `yaml:"engine"`
	Workload struct {
		Concurrency  int     `yaml:"concurrency,omitempty"`
		Rate         float64 `yaml:"rate,omitempty"`
		Arrival      string  `yaml:"arrival,omitempty"`
		Duration     string  `yaml:"duration,omitempty"`
		Requests     int     `yaml:"requests,omitempty"`
		PromptTokens int     `yaml:"prompt_tokens,omitempty"`
		OutputTokens int     `yaml:"output_tokens,omitempty"`
		Dataset      *struct {
			Type string `yaml:"type"`
			Path string `yaml:"path"`
		} `yaml:"dataset,omitempty"`
	} `yaml:"workload"`
	Request *struct {
		Endpoint string `yaml:"endpoint"`
	} `yaml:"request,omitempty"`
}

// YAML is the scenario file f stands for. It refuses only what the flags
// alone decide: no --url, no load or no length, a dataset whose kind its
// name does not say; every value is then checked as a file's would be.
func (f Flags) YAML() ([]byte, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	var doc flagDoc
	doc.Name, doc.Seed, doc.Model = flagsName(f.URL), f.Seed, literal(f.Model)
	doc.Engine.Kind, doc.Engine.BaseURL, doc.Engine.APIKeyEnv = KindExternal, literal(f.URL), f.APIKeyEnv
	if base, ok := endpoints.APIBase(f.URL); ok {
		doc.Engine.BaseURL = literal(base)
	}
	w := &doc.Workload
	w.Concurrency, w.Rate, w.Requests = f.Concurrency, f.Rate, f.Requests
	if f.Rate != 0 {
		w.Arrival = "poisson" // what vLLM's bench and GuideLLM send at a rate
	}
	if f.Duration != 0 {
		w.Duration = f.Duration.String()
	}
	w.PromptTokens, w.OutputTokens = f.PromptTokens, f.OutputTokens
	if f.Dataset != "" {
		w.Dataset = &struct {
			Type string `yaml:"type"`
			Path string `yaml:"path"`
		}{datasetType(f.Dataset), literal(f.Dataset)}
	}
	if f.Endpoint != "" {
		doc.Request = &struct {
			Endpoint string `yaml:"endpoint"`
		}{f.Endpoint}
	}
	return yaml.Marshal(doc)
}

// check is what the flags alone decide, before the scenario's checks.
func (f Flags) check() error {
	var errs ErrorList
	fail := func(format string, args ...any) {
		errs = append(errs, &Error{File: FlagsFile, Msg: fmt.Sprintf(format, args...)})
	}
	if f.URL == "" {
		fail("--url: the engine's URL is required (e.g. --url http://127.0.0.1:8000)")
	}
	if f.Concurrency == 0 && f.Rate == 0 {
		fail("no load: give --concurrency N (N users, each sending when its last request ends) or --rate R (R requests per second)")
	}
	if f.Duration == 0 && f.Requests == 0 {
		fail("no length: give --duration D (e.g. 30s) or --requests N")
	}
	if f.Dataset != "" && datasetType(f.Dataset) == "" {
		fail(`--dataset %s: want a .jsonl file (one {"prompt": …} or {"messages": […]} per line) or a ShareGPT .json file`, f.Dataset)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// Given lists the flags f holds a value of, in the order --help shows them
// grouped: what a message says was given.
func (f Flags) Given() []string {
	var out []string
	for _, g := range []struct {
		flag string
		set  bool
	}{
		{"--url", f.URL != ""}, {"--model", f.Model != ""}, {"--api-key-env", f.APIKeyEnv != ""},
		{"--concurrency", f.Concurrency != 0}, {"--rate", f.Rate != 0}, {"--duration", f.Duration != 0},
		{"--requests", f.Requests != 0}, {"--prompt-tokens", f.PromptTokens != 0}, {"--output-tokens", f.OutputTokens != 0},
		{"--dataset", f.Dataset != ""}, {"--endpoint", f.Endpoint != ""}, {"--seed", f.Seed != 0},
	} {
		if g.set {
			out = append(out, g.flag)
		}
	}
	return out
}

// datasetType is the dataset type a file's name says ("" = neither).
func datasetType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return DatasetJSONL
	case ".json":
		return DatasetShareGPT
	}
	return ""
}

// literal keeps a value typed on the command line from reading as a
// ${VAR} reference: the shell has expanded what the user meant.
func literal(s string) string { return strings.ReplaceAll(s, "${", "$${") }

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// flagsName names the scenario after the engine's host and port
// ("gpu-host-8000"), so run directories say what they measured.
func flagsName(raw string) string {
	name := "url"
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		name = strings.Trim(notNameChars.ReplaceAllString(u.Host, "-"), "-._")
	}
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "url"
	}
	return name
}

// namingFlags rewrites a scenario built from flags' errors to name the
// flag that set each field: its YAML's lines mean nothing to the user.
func namingFlags(err error) error {
	var list ErrorList
	if !errors.As(err, &list) {
		return err
	}
	for _, e := range list {
		if e.File != FlagsFile {
			continue // an override's (--set)
		}
		e.Line, e.Column = 0, 0
		for _, ff := range flagFields {
			if e.Field == ff.field || strings.HasPrefix(e.Field, ff.field+".") {
				e.Field = ff.flag + " (" + e.Field + ")"
				break
			}
		}
	}
	return list
}
