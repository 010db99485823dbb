// Package importer turns the command line of another benchmark tool (vLLM's
// `vllm bench serve`, SGLang's `python -m sglang.bench_serving`, `aiperf
// profile`, `guidellm benchmark`) into the
// llmbench scenario that sends the same load, and lists every option it
// could not carry over, each with why: nothing is dropped silently
// (docs/decisions/0056, 1000). Each tool's options are a table in its own
// file, read from that tool's own parser definitions.
package importer

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Dropped is one option of the tool's command line that the scenario does
// not carry, and why.
type Dropped struct {
	Option string // as given, with its value ("--profile", "--tokenizer gpt2")
	Why    string
}

func (d Dropped) String() string { return d.Option + " (" + d.Why + ")" }

// Result is an imported command line: the scenario file and what it left out.
type Result struct {
	YAML    []byte
	Dropped []Dropped
}

// tool is one benchmark tool's command line as llmbench reads it.
type tool struct {
	command  string   // how users run it, for messages
	prefixes []string // words of the command itself a pasted line may start with
	options  []option
	defaults func() *draft // the tool's defaults, before its options apply
	// exact: the parser takes whole option names only (click, cyclopts);
	// argparse's also take a unique prefix.
	exact bool
	// finish checks and completes the draft once every option applied
	// (options whose meaning depends on others); nil: nothing to do.
	finish func(d *draft) ([]Dropped, error)
}

var tools = map[string]tool{"vllm": vllmTool, "sglang": sglangTool, "aiperf": aiperfTool, "guidellm": guidellmTool}

// Tools lists the tools Import reads, sorted.
func Tools() []string {
	out := make([]string, 0, len(tools))
	for name := range tools {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Import reads args, the command line of the named tool (without or with
// the command itself: "vllm bench serve --model m …" and "--model m …"
// read alike), and returns the scenario that sends the same load.
func Import(name string, args []string) (Result, error) {
	t, ok := tools[name]
	if !ok {
		return Result{}, fmt.Errorf("import %q: want %s", name, strings.Join(Tools(), " or "))
	}
	d := t.defaults()
	dropped, err := parseArgs(t, stripCommand(t, args), d)
	if err != nil {
		return Result{}, err
	}
	if t.finish != nil {
		notes, err := t.finish(d)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", t.command, err)
		}
		dropped = append(dropped, notes...)
	} else {
		dropped = append(dropped, d.notes...) // a finish returns them with its own
	}
	doc, notes := d.scenario(name)
	dropped = append(dropped, notes...)
	data, err := render(name, t.command, doc, dropped)
	return Result{YAML: data, Dropped: dropped}, err
}

// stripCommand drops the words of the tool's own command a pasted command
// line starts with ("vllm bench serve", "python3 -m sglang.bench_serving").
func stripCommand(t tool, args []string) []string {
	for len(args) > 0 && slices.Contains(t.prefixes, args[0]) {
		args = args[1:]
	}
	return args
}
