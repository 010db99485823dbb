package importer

import (
	"fmt"
	"slices"
	"strings"
)

// option is one option of a tool's argparse parser.
type option struct {
	name  string // "--num-prompts"
	arity int    // 0: a switch; 1: one value; many: values up to the next option (nargs * or +)
	// apply carries the option into the draft; nil: not carried over, why says why.
	apply func(d *draft, vals []string) error
	why   string
}

const many = -1

// parseArgs applies args to d as the tool's argparse would read them: --name
// value, --name=value, a switch alone, nargs options taking the values up to
// the next option, and (argparse's allow_abbrev) a unique prefix of a name.
// An option the tool does not have, or a stray value, is an error: the
// tool itself would refuse it.
func parseArgs(t tool, args []string, d *draft) ([]Dropped, error) {
	var dropped []Dropped
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !isOption(t, arg) {
			return nil, fmt.Errorf("%s: %q is not an option (options start with --)", t.command, arg)
		}
		name, inline, hasInline := strings.Cut(arg, "=")
		o, err := lookup(t, name)
		if err != nil {
			return nil, err
		}
		var vals []string
		switch {
		case o.arity == 0 && hasInline:
			return nil, fmt.Errorf("%s: %s takes no value", t.command, o.name)
		case hasInline:
			vals = []string{inline}
		case o.arity == 1:
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s: %s needs a value", t.command, o.name)
			}
			i++
			vals = []string{args[i]}
		case o.arity == many:
			for i+1 < len(args) && !isOption(t, args[i+1]) {
				i++
				vals = append(vals, args[i])
			}
		}
		if o.apply == nil {
			dropped = append(dropped, Dropped{Option: strings.TrimSpace(o.name + " " + strings.Join(vals, " ")), Why: o.why})
			continue
		}
		if err := o.apply(d, vals); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", t.command, o.name, strings.Join(vals, " "), err)
		}
	}
	return dropped, nil
}

// isOption reports whether arg names an option: it starts with --, or it is
// one of the tool's own short names (AIPerf's -m, GuideLLM's -c), so a value
// such as -1 still reads as a value.
func isOption(t tool, arg string) bool {
	if strings.HasPrefix(arg, "--") {
		return true
	}
	name, _, _ := strings.Cut(arg, "=")
	return slices.ContainsFunc(t.options, func(o option) bool { return o.name == name })
}

// lookup finds an option by its name or, as argparse does, by a prefix of
// exactly one name (not for a tool whose parser takes whole names only).
func lookup(t tool, name string) (option, error) {
	var match []option
	for _, o := range t.options {
		if o.name == name {
			return o, nil
		}
		if !t.exact && strings.HasPrefix(o.name, name) {
			match = append(match, o)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return option{}, fmt.Errorf("%s has no option %s (its options as read from its source: llmbench import --help)", t.command, name)
	}
	names := make([]string, len(match))
	for i, o := range match {
		names[i] = o.name
	}
	return option{}, fmt.Errorf("%s: %s is ambiguous: %s", t.command, name, strings.Join(names, ", "))
}

// Value parsers for apply funcs.

func setFloat(p func(*draft) *float64) func(*draft, []string) error {
	return func(d *draft, v []string) error {
		_, err := fmt.Sscan(v[0], p(d))
		return err
	}
}

func scanInt(s string, p *int) error {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != s {
		return fmt.Errorf("want an integer")
	}
	*p = n
	return nil
}

func intField(p func(*draft) *int) func(*draft, []string) error {
	return func(d *draft, v []string) error { return scanInt(v[0], p(d)) }
}

func strField(p func(*draft) *string) func(*draft, []string) error {
	return func(d *draft, v []string) error { *p(d) = v[0]; return nil }
}

func switchOn(p func(*draft) *bool, to bool) func(*draft, []string) error {
	return func(d *draft, _ []string) error { *p(d) = to; return nil }
}

// dropAll marks every name in names not carried over, for the same reason.
func dropAll(why string, arity int, names ...string) []option {
	out := make([]option, len(names))
	for i, n := range names {
		out[i] = option{name: n, arity: arity, why: why}
	}
	return out
}
