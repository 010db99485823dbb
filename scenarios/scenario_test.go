package scenarios

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/llmbench-org/llmbench/engine/sim"
)

func noEnv(string) (string, bool) { return "", false }

// parseIn parses a scenario as if it were the file name in testdata/.
// The built-in engine's settings are resolved with its model, as run.Load
// does (scenarios itself carries them as plain data).
func parseIn(name string, data []byte, lookup func(string) (string, bool)) (Scenario, error) {
	return withEngine(parse(name, data, source{dir: "testdata"}, lookup))
}

// withEngine resolves a loaded scenario's built-in engine settings.
func withEngine(s Scenario, err error) (Scenario, error) {
	if err != nil {
		return s, err
	}
	return s, s.ResolveEngine(sim.Model{})
}

// sameScenario compares scenarios including the ${VAR} texts they keep,
// but not where they were read from.
var sameScenario = cmp.Options{cmp.AllowUnexported(Scenario{}, Stage{}), cmpopts.IgnoreFields(Scenario{}, "src")}

func defaultSim(t *testing.T) *sim.Params {
	t.Helper()
	p, err := sim.Preset(sim.DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestQuickstartLoads(t *testing.T) {
	t.Parallel()
	s, err := LoadFS(Examples(), "quickstart.yaml")
	if err == nil {
		err = s.ResolveEngine(sim.Model{})
	}
	if err != nil {
		t.Fatalf("quickstart does not load:\n%v", err)
	}
	want := Scenario{
		Name:   "quickstart",
		Seed:   42,
		Engine: Engine{Kind: KindSim, Dialect: "sglang", Preset: sim.DefaultPreset, Sim: defaultSim(t), Faults: &sim.Faults{}, Process: ProcessSeparate},
		Workload: Workload{
			LoadSpec:  LoadSpec{Concurrency: 16},
			Limits:    Limits{Duration: 20 * time.Second},
			LateAfter: DefaultLateAfter,
			Timeout:   DefaultRequestTimeout, StallTimeout: DefaultStallTimeout,
			Abort:     Abort{Unreachable: DefaultAbortUnreachable, FirstFailures: DefaultAbortFirst},
			IgnoreEOS: ptr(true),
			Dataset:   Dataset{Type: DatasetSynthetic},
			Prompt:    Length{Dist: DistUniform, Min: 64, Max: 256},
			Output:    Length{Dist: DistUniform, Min: 32, Max: 192},
		},
		Scrape: Scrape{Interval: time.Second, Timeout: time.Second},
		Report: &ReportSettings{Validity: Validity{MaxFailureRate: DefaultMaxFailureRate}},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(Scenario{})); diff != "" {
		t.Errorf("quickstart (-want +got):\n%s", diff)
	}
}

func TestLoadUnknownKeyNamesFileAndLine(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/unknown-key.yaml")
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Load error = %v, want an ErrorList", err)
	}
	const want = `testdata/unknown-key.yaml:5:3: workload.concurency: unknown field (did you mean "concurrency"?)`
	if got := err.Error(); !strings.Contains(got, want) {
		t.Errorf("error:\n%s\nwant it to contain:\n%s", got, want)
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	s, err := parseIn("min.yaml", []byte("name: m\nengine: {kind: sim}\nworkload: {rate: 4, requests: 10}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := Scenario{
		Name:   "m",
		Seed:   DefaultSeed,
		Engine: Engine{Kind: KindSim, Dialect: DefaultSimDialect, Preset: sim.DefaultPreset, Sim: defaultSim(t), Faults: &sim.Faults{}, Process: ProcessSeparate},
		Workload: Workload{
			LoadSpec:  LoadSpec{Rate: 4, Arrival: ArrivalPoisson},
			Limits:    Limits{Requests: 10},
			LateAfter: DefaultLateAfter,
			Timeout:   DefaultRequestTimeout, StallTimeout: DefaultStallTimeout,
			Abort:     Abort{Unreachable: DefaultAbortUnreachable, FirstFailures: DefaultAbortFirst},
			IgnoreEOS: ptr(true),
			Dataset:   Dataset{Type: DatasetSynthetic},
			Prompt:    Length{Dist: DistFixed, Value: DefaultPromptTokens},
			Output:    Length{Dist: DistFixed, Value: DefaultOutputTokens},
		},
		Scrape: Scrape{Interval: time.Second, Timeout: time.Second},
		Report: &ReportSettings{Validity: Validity{MaxFailureRate: DefaultMaxFailureRate}},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(Scenario{})); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

// TestParseErrors checks that each kind of mistake is reported at its line
// and column with its field, and that all of a file's mistakes are listed.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string // every line of the error, in order
	}{
		{
			name: "unknown key",
			yaml: "name: x\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  duration: 1s\n  colour: red\n",
			want: []string{`f.yaml:6:3: workload.colour: unknown field (known fields: abort, arrival, cache, concurrency, cooldown, cv, dataset, duration, ignore_eos, images, late_after, max_concurrency, output_tokens, phases, prompt_tokens, rate, requests, search, stages, stall_timeout, sweep, think_time, timeout, trace, until, warmup, when_capped)`},
		},
		{
			name: "wrong type",
			yaml: "name: x\nengine: {kind: sim}\nworkload:\n  concurrency: sixteen\n  duration: 1s\n",
			want: []string{`f.yaml:4:16: workload.concurrency: want an integer, got the string "sixteen"`},
		},
		{
			name: "quoted number is a string",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: \"4\", duration: 1s}\n",
			want: []string{`f.yaml:3:25: workload.concurrency: want an integer, got the string "4"`},
		},
		{
			name: "duration without unit",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: 4, duration: 20}\n",
			want: []string{`f.yaml:3:38: workload.duration: want a duration such as "20s" or "1m30s", got the integer 20`},
		},
		{
			name: "infinite rate points at the closed loop",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {rate: inf, requests: 100}\n",
			want: []string{`f.yaml:3:18: workload.rate: want a finite number, got the string "inf" (for vLLM's --request-rate inf with --max-concurrency N, write concurrency: N with requests: M)`},
		},
		{
			name: "slo without a bound",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: 4, duration: 1s}\nslo: {}\n",
			want: []string{`f.yaml:4:6: slo: set at least one of ttft, tpot, e2e, or remove slo`},
		},
		{
			name: "slo bounds are durations, positive",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: 4, duration: 1s}\nslo: {ttft: fast, e2e: -1s, itl: 5ms}\n",
			want: []string{
				`f.yaml:4:13: slo.ttft: want a duration such as "20s" or "1m30s", got the string "fast"`,
				`f.yaml:4:24: slo.e2e: want a positive duration, got -1s`,
				`f.yaml:4:29: slo.itl: unknown field (known fields: e2e, target, tpot, ttft)`,
			},
		},
		{
			name: "missing required fields",
			yaml: "seed: 3\n",
			want: []string{
				`f.yaml:1:1: name: missing required field`,
				`f.yaml:1:1: engine: missing required field`,
				`f.yaml:1:1: workload: missing required field`,
			},
		},
		{
			name: "missing stop",
			yaml: "name: x\nengine: {kind: sim}\nworkload:\n  rate: 3\n",
			want: []string{`f.yaml:4:3: workload: missing required field: duration, requests, or both`},
		},
		{
			name: "all errors listed in file order",
			yaml: "name: bad name\nengine:\n  kind: simulated\nworkload:\n  concurrency: 0\n  rate: 2\n  duration: -1s\n  prompt_tokens: {dist: uniform, min: 10}\nscrape: {interval: 1s, timeout: 2s}\n",
			want: []string{
				`f.yaml:1:7: name: want 1 to 64 letters, digits, '.', '_' or '-' (it names run directories and request ids), got "bad name"`,
				`f.yaml:3:9: engine.kind: unknown engine kind "simulated": sim, external or launch`,
				`f.yaml:6:9: workload.rate: set one of concurrency (closed loop), rate (open loop) or stages, not concurrency and rate`,
				`f.yaml:7:13: workload.duration: want a positive duration, got -1s`,
				`f.yaml:8:18: workload.prompt_tokens: uniform needs both min and max`,
				`f.yaml:9:33: scrape.timeout: want at most the interval (1s), got 2s`,
			},
		},
		{
			name: "launch is checked",
			yaml: "name: x\nengine:\n  kind: launch\n  base_url: http://a:1/v1\n  launch: {kind: vllm, port: 70000, env: [NOEQUALS], ready_path: health}\nworkload: {concurrency: 1, duration: 1s}\n",
			want: []string{
				"f.yaml:4:13: engine.base_url: not for kind launch: llmbench starts the engine on the address it chooses",
				"f.yaml:5:11: engine.launch.model: missing: the model the engine loads (or the scenario's model)",
				"f.yaml:5:30: engine.launch.port: want a port from 0 (a free one) to 65535, got 70000",
				`f.yaml:5:43: engine.launch.env[0]: want NAME=value, got "NOEQUALS"`,
				`f.yaml:5:66: engine.launch.ready_path: want a path starting with /, got "health"`,
			},
		},
		{
			name: "launch command needs its argv",
			yaml: "name: x\nengine: {kind: launch, launch: {kind: command}}\nworkload: {concurrency: 1, duration: 1s}\n",
			want: []string{"f.yaml:2:32: engine.launch.command: missing required field for kind command: the engine's argv"},
		},
		{
			name: "scrape sources are exclusive and checked",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1s}\nscrape:\n  url: http://a:1/metrics\n  targets: [http://b:1/metrics, 'ftp://c']\n  prometheus: {selector: '{job=\"x\"}'}\n",
			want: []string{
				"f.yaml:6:12: scrape.targets: give either url or targets, not both",
				`f.yaml:6:33: scrape.targets[1]: want an absolute http(s) URL, got "ftp://c"`,
				"f.yaml:7:15: scrape.prometheus: give either prometheus or url/targets, not both",
				"f.yaml:7:15: scrape.prometheus.url: missing required field",
				`f.yaml:7:26: scrape.prometheus.selector: give label matchers without braces, e.g. job="vllm", got "{job=\"x\"}"`,
			},
		},
		{
			name: "parameter of another distribution",
			yaml: "name: x\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  duration: 1s\n  output_tokens: {dist: fixed, value: 8, max: 9}\n",
			want: []string{`f.yaml:6:47: workload.output_tokens.max: not a parameter of dist fixed (it takes [value])`},
		},
		{
			name: "external needs base_url (the model can be asked for)",
			yaml: "name: x\nengine:\n  kind: external\n  metrics_url: not-a-url\nworkload: {concurrency: 1, duration: 1s}\n",
			want: []string{
				`f.yaml:3:3: engine.base_url: missing required field for kind external`,
				`f.yaml:4:16: engine.metrics_url: want an absolute http(s) URL, got "not-a-url"`,
			},
		},
		{
			name: "sim takes no url",
			yaml: "name: x\nengine: {kind: sim, base_url: \"http://h/v1\"}\nworkload: {concurrency: 1, duration: 1s}\n",
			want: []string{`f.yaml:2:31: engine.base_url: only for kind external: the built-in engine listens where llmbench starts it`},
		},
		{
			name: "duplicate key",
			yaml: "name: x\nname: y\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1s}\n",
			want: []string{`f.yaml:2:1: name: duplicate key (first at line 1)`},
		},
		{
			name: "syntax error",
			yaml: "name: x\nengine:\n\tkind: sim\n",
			want: []string{`f.yaml:3: invalid YAML: found character that cannot start any token`},
		},
		{
			name: "two documents",
			yaml: "name: x\n---\nname: y\n",
			want: []string{`f.yaml:3:1: a scenario file holds one YAML document; found a second one`},
		},
		{
			name: "not a mapping",
			yaml: "- a\n- b\n",
			want: []string{`f.yaml:1:1: want a mapping of scenario fields, got a list`},
		},
		{
			name: "empty",
			yaml: "",
			want: []string{`f.yaml: empty file: a scenario needs at least name, engine and workload`},
		},
		{
			name: "undefined variable",
			yaml: "name: x\nengine: {kind: sim}\nworkload: {concurrency: \"${USERS}\", duration: 1s}\n",
			want: []string{`f.yaml:3:25: workload.concurrency: environment variable USERS is not set (write ${USERS:-default} for a fallback)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(tt.yaml), noEnv)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error = %v, want an ErrorList", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvSubstitutionNeverResolvedBack(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ENGINE_URL": "http://10.0.0.7:8000/v1", "USERS": "8", "SECRET_MODEL": "s3cr3t"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	src := `name: env
model: ${SECRET_MODEL}
engine:
  kind: external
  base_url: ${ENGINE_URL}
  metrics_url: "${METRICS_URL:-http://metrics.example:8000/metrics}"
workload:
  concurrency: ${USERS}
  duration: 5s
`
	s, err := parseIn("env.yaml", []byte(src), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if s.Engine.BaseURL != env["ENGINE_URL"] || s.Workload.Concurrency != 8 || s.Model != "s3cr3t" ||
		s.Engine.MetricsURL != "http://metrics.example:8000/metrics" {
		t.Errorf("substitution: got base_url %q, concurrency %d, model %q, metrics_url %q",
			s.Engine.BaseURL, s.Workload.Concurrency, s.Model, s.Engine.MetricsURL)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cr3t", "10.0.0.7"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("resolved scenario contains the substituted value %q:\n%s", secret, out)
		}
	}
	back, err := parseIn("resolved.yaml", out, lookup)
	if err != nil {
		t.Fatalf("resolved scenario does not parse:\n%v\n%s", err, out)
	}
	if diff := cmp.Diff(s, back, sameScenario); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Parallel()
	lookup := func(k string) (string, bool) {
		if k == "A" {
			return "1", true
		}
		return "", false
	}
	tests := []struct {
		in, want string
		changed  bool
		err      bool
	}{
		{in: "plain", want: "plain"},
		{in: "pa$$word", want: "pa$$word"},
		{in: "${A}", want: "1", changed: true},
		{in: "x${A}y${B:-2}z", want: "x1y2z", changed: true},
		{in: "$${A}", want: "${A}", changed: true},
		{in: "${B:-}", want: "", changed: true},
		{in: "${B}", err: true},
		{in: "${A", err: true},
		{in: "${1A}", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, changed, err := expandEnv(tt.in, lookup)
			if (err != nil) != tt.err {
				t.Fatalf("expandEnv(%q) error = %v, want error %v", tt.in, err, tt.err)
			}
			if err == nil && (got != tt.want || changed != tt.changed) {
				t.Errorf("expandEnv(%q) = %q, %v; want %q, %v", tt.in, got, changed, tt.want, tt.changed)
			}
		})
	}
}

// TestExamplesLoadAndRoundTrip loads every shipped example and checks that
// its resolved form parses back to the same scenario.
func TestExamplesLoadAndRoundTrip(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(Examples(), "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := withEngine(LoadFS(Examples(), name))
			if err != nil {
				t.Fatalf("example does not load:\n%v", err)
			}
			out, err := s.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			back, err := withEngine(parse("resolved-"+name, out, s.src, noEnv))
			if err != nil {
				t.Fatalf("resolved example does not parse:\n%v\n%s", err, out)
			}
			if diff := cmp.Diff(s, back, sameScenario); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	examples, _ := fs.Glob(Examples(), "*.yaml")
	for _, name := range examples {
		data, _ := fs.ReadFile(Examples(), name)
		f.Add(data)
	}
	f.Add([]byte("name: x\nengine: {kind: external, base_url: 'http://h:1/v1'}\nmodel: m\nworkload: {rate: 1.5, arrival: constant, requests: 3, prompt_tokens: 7}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("name: ${X:-y}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseIn("fuzz.yaml", data, noEnv)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			return
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatalf("valid scenario does not resolve: %v", err)
		}
		back, err := parseIn("resolved.yaml", out, noEnv)
		if err != nil {
			t.Fatalf("resolved scenario does not parse:\n%v\n%s", err, out)
		}
		if diff := cmp.Diff(s, back, sameScenario); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// A credential given literally in request.headers never reaches the run
// directory's scenario.yaml; other headers and ${VAR} references are kept.
func TestLiteralHeaderCredentialsNotResolvedBack(t *testing.T) {
	t.Parallel()
	lookup := func(k string) (string, bool) { return map[string]string{"TOK": "env-secret-77"}[k], k == "TOK" }
	src := `name: headers
engine:
  kind: external
  base_url: http://h:8000/v1
request:
  headers: {X-Api-Key: literal-secret-1, Authorization: "Bearer literal-secret-2", Cookie: "session=literal-secret-3", X-Route: pool-a, X-Token-Env: "${TOK}"}
workload: {concurrency: 1, duration: 5s}
`
	s, err := parseIn("h.yaml", []byte(src), lookup)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"literal-secret-1", "literal-secret-2", "literal-secret-3", "env-secret-77"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("resolved scenario holds %q:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"X-Route: pool-a", `X-Token-Env: "${TOK}"`, "X-Api-Key: REDACTED"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("resolved scenario lacks %q:\n%s", kept, out)
		}
	}
}
