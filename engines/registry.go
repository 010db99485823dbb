package engines

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// builtin is the families llmbench ships, in detection priority order:
// when two dialects' metric names cover as many families of a /metrics
// page, the one listed first wins (scrape.Detect).
var builtin = []Family{sglang, vllm, fastdeploy, tgi, llamacpp, triton, trtllm}

// The built-in families' names.
const (
	SGLang     = "sglang"
	VLLM       = "vllm"
	FastDeploy = "fastdeploy"
	TGI        = "tgi"
	LlamaCpp   = "llamacpp"
	Triton     = "triton"
	TRTLLM     = "trtllm"
)

// registry holds the registered families. Reads happen when a component is
// built (a client, a scrape loop, a scenario's validation), never per
// request or per chunk, so a lock is cheap enough.
var registry struct {
	sync.RWMutex
	families []Family
}

func init() {
	for _, f := range builtin {
		if err := Check(f); err != nil {
			panic(err)
		}
	}
	registry.families = slices.Clone(builtin)
}

// All returns every registered family, in detection priority order. The
// slice is the caller's.
func All() []Family {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.families)
}

// Names returns the registered families' names, in detection priority order.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, len(registry.families))
	for i, f := range registry.families {
		names[i] = f.Name
	}
	return names
}

// Lookup returns the family named name, or an error that names every
// registered family.
func Lookup(name string) (Family, error) {
	registry.RLock()
	defer registry.RUnlock()
	for _, f := range registry.families {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(registry.families))
	for i, f := range registry.families {
		names[i] = f.Name
	}
	return Family{}, fmt.Errorf("unknown engine family %q (known: %s)", name, strings.Join(names, ", "))
}

// Known reports whether a family is registered under name.
func Known(name string) bool {
	_, err := Lookup(name)
	return err == nil
}

// Register adds f after the others (lowest detection priority), for an
// engine family built outside this package (a test's, a fork's). It
// returns the function that removes it again. f must pass Check and its
// name must be new. scrape needs a dialect registered under the same name
// (scrape.RegisterDialect) before it can map f's metrics.
func Register(f Family) (unregister func(), err error) {
	if err := Check(f); err != nil {
		return nil, err
	}
	registry.Lock()
	defer registry.Unlock()
	if slices.ContainsFunc(registry.families, func(g Family) bool { return g.Name == f.Name }) {
		return nil, fmt.Errorf("engines: family %q is already registered", f.Name)
	}
	registry.families = append(slices.Clip(registry.families), f)
	return func() {
		registry.Lock()
		defer registry.Unlock()
		registry.families = slices.DeleteFunc(slices.Clone(registry.families), func(g Family) bool { return g.Name == f.Name })
	}, nil
}

// Check returns every field f leaves empty, or nil: a family with a blank
// field would make some component fall back to a guess.
func Check(f Family) error {
	var errs []error
	miss := func(field string) { errs = append(errs, fmt.Errorf("%s: missing", field)) }
	if f.Name == "" || strings.ContainsAny(f.Name, " \t\n/:") || strings.ToLower(f.Name) != f.Name {
		errs = append(errs, fmt.Errorf("name %q: want a lower-case key without spaces, slashes or colons", f.Name))
	}
	if f.Display == "" {
		miss("display")
	}
	if f.IDs.Echo == "" {
		miss("ids.echo")
	}
	if len(f.Tokenize) == 0 {
		miss("tokenize")
	}
	for _, t := range f.Tokenize {
		if !slices.Contains(TokenizeAPIs, t) {
			errs = append(errs, fmt.Errorf("tokenize: unknown API %q", t))
		}
	}
	if f.Lengths.How == "" {
		miss("lengths.how")
	}
	if l := f.Launch; l != nil {
		if len(l.Argv) == 0 || l.Argv[0] == "" {
			miss("launch.argv")
		}
		if !strings.HasPrefix(l.ReadyPath, "/") {
			errs = append(errs, fmt.Errorf("launch.ready_path %q: want an absolute path", l.ReadyPath))
		}
		if l.MetricsPort && !slices.Contains(l.Argv, "{metrics_port}") {
			errs = append(errs, errors.New("launch: a separate metrics port must be passed as {metrics_port}"))
		}
	}
	r := f.Reconcile
	if r.TTFTSpan == "" {
		miss("reconcile.ttft_span")
	}
	if r.OutsideTTFT == "" {
		miss("reconcile.outside_ttft")
	}
	if r.LoggedGauges != (r.DecodeLogInterval > 0) {
		errs = append(errs, errors.New("reconcile: logged gauges and a decode-log interval go together"))
	}
	if (r.PrefillSpan == "") != (r.OutsidePrefill == "") {
		errs = append(errs, errors.New("reconcile: prefill span and what lies outside it go together"))
	}
	if len(f.Wire.Quirks) == 0 {
		miss("wire.quirks (say \"none\")")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("engines: family %q: %w", f.Name, err)
	}
	return nil
}

// TakingMinTokens returns the names of the families that take min_tokens
// beside ignore_eos.
func TakingMinTokens() []string {
	var out []string
	for _, f := range All() {
		if f.Lengths.MinTokens {
			out = append(out, f.Name)
		}
	}
	return out
}

// Simulated returns the names of the families the built-in engine speaks.
func Simulated() []string {
	var out []string
	for _, f := range All() {
		if f.Sim {
			out = append(out, f.Name)
		}
	}
	return out
}

// Launchable returns the names of the families llmbench can start.
func Launchable() []string {
	var out []string
	for _, f := range All() {
		if f.Launch != nil {
			out = append(out, f.Name)
		}
	}
	return out
}
