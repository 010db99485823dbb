package engines

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	// Detection priority order: scrape.Detect's ties go to the first.
	want := []string{SGLang, VLLM, FastDeploy, TGI, LlamaCpp, Triton, TRTLLM}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, f := range All() {
		if err := Check(f); err != nil {
			t.Error(err)
		}
		if g, err := Lookup(f.Name); err != nil || g.Name != f.Name {
			t.Errorf("Lookup(%q) = %q, %v", f.Name, g.Name, err)
		}
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"Simulated", Simulated(), []string{SGLang, VLLM, FastDeploy, LlamaCpp}},
		{"Launchable", Launchable(), []string{SGLang, VLLM, FastDeploy, LlamaCpp}},
		{"TakingMinTokens", TakingMinTokens(), []string{SGLang, VLLM}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s() = %v, want %v", c.name, c.got, c.want)
		}
	}
	_, err := Lookup("ollama")
	if err == nil || !strings.Contains(err.Error(), `"ollama"`) || !strings.Contains(err.Error(), TRTLLM) {
		t.Errorf("Lookup(ollama) = %v, want an error naming it and the known families", err)
	}
	all := All()
	all[0].Name = "changed"
	if Names()[0] == "changed" {
		t.Error("All returns the registry's own slice")
	}
}

// complete is a family with every field filled.
func complete() Family {
	return Family{
		Name: "x", Display: "X",
		IDs:       IDs{Echo: "{id}"},
		Tokenize:  []TokenizeAPI{TokenizeTGI},
		Lengths:   Lengths{How: "ignore_eos"},
		Launch:    &Launch{Argv: []string{"x", "--metrics-port", "{metrics_port}"}, ReadyPath: "/health", MetricsPort: true},
		Reconcile: NeutralReconcile,
		Wire:      Wire{Quirks: []string{"none"}},
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	if err := Check(complete()); err != nil {
		t.Fatalf("a complete family: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Family)
		want   string
	}{
		{"no name", func(f *Family) { f.Name = "" }, "name"},
		{"upper-case name", func(f *Family) { f.Name = "X" }, "lower-case"},
		{"name with a colon", func(f *Family) { f.Name = "x:" }, "colons"},
		{"no display", func(f *Family) { f.Display = "" }, "display"},
		{"no echo", func(f *Family) { f.IDs.Echo = "" }, "ids.echo"},
		{"no tokenizer", func(f *Family) { f.Tokenize = nil }, "tokenize"},
		{"unknown tokenizer", func(f *Family) { f.Tokenize = []TokenizeAPI{"ollama"} }, `unknown API "ollama"`},
		{"lengths unsaid", func(f *Family) { f.Lengths.How = "" }, "lengths.how"},
		{"empty launch", func(f *Family) { f.Launch = &Launch{ReadyPath: "/health"} }, "launch.argv"},
		{"relative ready path", func(f *Family) { f.Launch.ReadyPath = "health" }, "ready_path"},
		{"metrics port not passed", func(f *Family) { f.Launch.Argv = []string{"x"} }, "{metrics_port}"},
		{"no TTFT span", func(f *Family) { f.Reconcile.TTFTSpan = "" }, "reconcile.ttft_span"},
		{"no outside TTFT", func(f *Family) { f.Reconcile.OutsideTTFT = "" }, "reconcile.outside_ttft"},
		{"logged gauges without interval", func(f *Family) { f.Reconcile.LoggedGauges = true }, "decode-log interval"},
		{"prefill span alone", func(f *Family) { f.Reconcile.OutsidePrefill = "" }, "prefill span"},
		{"quirks unsaid", func(f *Family) { f.Wire.Quirks = nil }, "wire.quirks"},
	}
	for _, tt := range tests {
		f := complete()
		tt.change(&f)
		if err := Check(f); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Check = %v, want an error about %s", tt.name, err, tt.want)
		}
	}
	// Launch may be nil: the engine is started as a command.
	f := complete()
	f.Launch = nil
	if err := Check(f); err != nil {
		t.Errorf("no launch: %v", err)
	}
}

// TestRegister is not parallel: it changes the registry.
func TestRegister(t *testing.T) {
	f := complete()
	f.Name = "fakeengine"
	undo, err := Register(f)
	if err != nil {
		t.Fatal(err)
	}
	if names := Names(); names[len(names)-1] != "fakeengine" || !Known("fakeengine") || !slices.Contains(Launchable(), "fakeengine") {
		t.Errorf("registered, Names() = %v, Launchable() = %v", names, Launchable())
	}
	if _, err := Register(f); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("a second registration: %v", err)
	}
	undo()
	if Known("fakeengine") || len(Names()) != len(builtin) {
		t.Errorf("unregistered, Names() = %v", Names())
	}
	f.Display = ""
	if _, err := Register(f); err == nil || Known("fakeengine") {
		t.Errorf("an incomplete family was registered: %v", err)
	}
	if _, err := Register(sglang); err == nil {
		t.Error("a built-in family registered twice")
	}
}
