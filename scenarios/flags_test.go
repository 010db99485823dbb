package scenarios

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The scenario a run from flags keeps as scenario.yaml is the golden file,
// and that file, loaded as any scenario file is, is the same scenario: the
// rerun reproduces the run.
func TestFlagsScenarioGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		golden string
		f      Flags
	}{
		{"flags-closed.golden.yaml", Flags{URL: "http://127.0.0.1:8000", Concurrency: 8, Duration: 30 * time.Second, PromptTokens: 512, OutputTokens: 64, Seed: 7}},
		{"flags-open.golden.yaml", Flags{URL: "https://gpu.example:8443/v1", Model: "llama-3-8b", APIKeyEnv: "ENGINE_KEY", Rate: 2.5, Requests: 200, Duration: time.Minute, Endpoint: "completions"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			sc, err := FromFlags(tt.f, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./scenarios -run FlagsScenarioGolden -update writes it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("scenario.yaml of %+v:\n%s\nwant (%s):\n%s", tt.f, got, path, want)
			}
			again, err := Load(path)
			if err != nil {
				t.Fatalf("the golden scenario.yaml does not load: %v", err)
			}
			if b, _ := again.Resolved(); string(b) != string(got) {
				t.Errorf("loaded back, the scenario differs:\n%s\nwant:\n%s", b, got)
			}
		})
	}
}

// What each flag sets, read back from the Scenario the decoder made.
func TestFlagsFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(data, []byte(`{"prompt": "hello there"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := FromFlags(Flags{URL: "http://h:9/", Model: "m", APIKeyEnv: "K", Rate: 3, Requests: 10, Dataset: data, OutputTokens: 5, Endpoint: "chat", Seed: 9}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	w := sc.Workload
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"engine", sc.Engine.Kind + " " + sc.Engine.BaseURL + " " + sc.Engine.APIKeyEnv, "external http://h:9/v1 K"},
		{"name", sc.Name, "h-9"},
		{"model", sc.Model, "m"},
		{"seed", sc.Seed, int64(9)},
		{"rate", w.Rate, 3.0},
		{"arrival", w.Arrival, "poisson"},
		{"requests", w.Requests, 10},
		{"dataset", w.Dataset.Type + " " + w.Dataset.Path, "jsonl " + data},
		{"output tokens", w.Output.Value, 5},
		{"endpoint", sc.Request.Endpoint, "chat"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// A relative --dataset is the working directory's: the scenario keeps it
// absolute, so its scenario.yaml reruns from anywhere. (Not parallel: it
// changes the working directory.)
func TestFlagsRelativeDataset(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(data, []byte(`{"prompt": "hello there"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	sc, err := FromFlags(Flags{URL: "http://h:9", Concurrency: 1, Duration: time.Second, Dataset: "prompts.jsonl"}, noEnv)
	if err != nil || sc.Workload.Dataset.Path != data {
		t.Errorf("relative dataset: %q, %v; want %q", sc.Workload.Dataset.Path, err, data)
	}
	b, err := sc.Resolved()
	if err != nil || !strings.Contains(string(b), "path: "+data) {
		t.Errorf("scenario.yaml does not name %s:\n%s", data, b)
	}
}

// A value typed on the command line is literal: "${" in it is not a
// reference to the environment.
func TestFlagsAreLiteral(t *testing.T) {
	t.Parallel()
	env := func(string) (string, bool) { return "EXPANDED", true }
	sc, err := FromFlags(Flags{URL: "http://h:9/v1", Model: "m${X}", Concurrency: 1, Requests: 1}, env)
	if err != nil || sc.Model != "m${X}" {
		t.Errorf("model %q, %v; want m${X}", sc.Model, err)
	}
}

// Every error of a scenario built from flags names the flag, and carries no
// line of a YAML file the user never wrote; several come together.
func TestFlagsErrors(t *testing.T) {
	t.Parallel()
	base := Flags{URL: "http://h:9", Concurrency: 2, Duration: time.Second}
	with := func(change func(*Flags)) Flags { f := base; change(&f); return f }
	for _, tt := range []struct {
		name string
		f    Flags
		want []string
	}{
		{"nothing", Flags{}, []string{"llmbench run: --url: the engine's URL is required", "llmbench run: no load: give --concurrency N", "llmbench run: no length: give --duration D"}},
		{"no url", with(func(f *Flags) { f.URL = "" }), []string{"--url: the engine's URL is required"}},
		{"both loads", with(func(f *Flags) { f.Rate = 3 }), []string{"llmbench run: --rate (workload.rate): set one of concurrency"}},
		{"url without scheme", with(func(f *Flags) { f.URL = "localhost:8000" }), []string{`llmbench run: --url (engine.base_url): want an absolute http(s) URL, got "localhost:8000"`}},
		{"negative concurrency", with(func(f *Flags) { f.Concurrency = -3 }), []string{"llmbench run: --concurrency (workload.concurrency): want at least 1, got -3"}},
		{"negative duration", with(func(f *Flags) { f.Duration = -time.Second }), []string{"--duration (workload.duration)"}},
		{"dataset of no known kind", with(func(f *Flags) { f.Dataset = "prompts.txt" }), []string{"--dataset prompts.txt: want a .jsonl file"}},
		{"missing dataset", with(func(f *Flags) { f.Dataset = filepath.Join(t.TempDir(), "none.json") }), []string{"llmbench run: --dataset (workload.dataset.path): cannot read"}},
		{"prompt length with a dataset", with(func(f *Flags) { f.Dataset = "x.jsonl"; f.PromptTokens = 5 }), []string{"--prompt-tokens (workload.prompt_tokens): not with dataset jsonl"}},
		{"unknown endpoint", with(func(f *Flags) { f.Endpoint = "moderations" }), []string{`--endpoint (request.endpoint): want chat, completions, responses, messages, embeddings, rerank or tei-rerank, got "moderations"`}},
		{"bad api key variable", with(func(f *Flags) { f.APIKeyEnv = "not a name" }), []string{"--api-key-env (engine.api_key_env)"}},
	} {
		_, err := FromFlags(tt.f, noEnv)
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("%s: %v, want an ErrorList", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", tt.name, w, err)
			}
		}
		for _, e := range list {
			if e.Line != 0 || e.File != FlagsFile {
				t.Errorf("%s: %q points into a file", tt.name, e.Error())
			}
		}
	}
	// An override's error keeps its own name (--set …).
	_, err := FromFlags(base, noEnv, mustOverride(t, "workload.nope=1"))
	if err == nil || !strings.Contains(err.Error(), "--set workload.nope=1") {
		t.Errorf("override: %v", err)
	}
}

func mustOverride(t *testing.T, s string) Override {
	t.Helper()
	o, err := ParseOverride(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The flags are bound with their help, each settable from a command line,
// and Given names exactly those given.
func TestFlagsBindAndGiven(t *testing.T) {
	t.Parallel()
	var f Flags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.Bind(fs)
	args := []string{"--url", "http://h:9", "--model", "m", "--api-key-env", "K", "--concurrency", "2", "--rate", "1.5",
		"--duration", "3s", "--requests", "4", "--prompt-tokens", "5", "--output-tokens", "6", "--dataset", "d.jsonl",
		"--endpoint", "completions", "--seed", "7"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want := Flags{URL: "http://h:9", Model: "m", APIKeyEnv: "K", Concurrency: 2, Rate: 1.5, Duration: 3 * time.Second, Requests: 4,
		PromptTokens: 5, OutputTokens: 6, Dataset: "d.jsonl", Endpoint: "completions", Seed: 7}
	if f != want {
		t.Errorf("bound %+v, want %+v", f, want)
	}
	var given []string
	for i := 0; i < len(args); i += 2 {
		given = append(given, args[i])
	}
	if got := strings.Join(f.Given(), " "); got != strings.Join(given, " ") {
		t.Errorf("Given() = %s, want %s", got, strings.Join(given, " "))
	}
	if got := (Flags{Rate: 2}).Given(); len(got) != 1 || got[0] != "--rate" {
		t.Errorf("Given() of a rate alone = %v", got)
	}
}
