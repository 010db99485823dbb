package scenarios

import (
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// lengthFields is Length without its custom YAML shape, to decode the mapping form.
type lengthFields Length

func (l *Length) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		var v int
		d.scalar(n, path, reflect.ValueOf(&v).Elem())
		*l = Length{Dist: DistFixed, Value: v}
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a token count or a mapping such as {dist: uniform, min: 64, max: 256}, got %s", describe(n))
		return
	}
	d.mapping(n, path, reflect.ValueOf((*lengthFields)(l)).Elem())
}

func (l Length) encodeYAML(e *encoder, path string) *yaml.Node {
	if l.Dist == DistFixed {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.Itoa(l.Value)}
	}
	return e.value(reflect.ValueOf(lengthFields(l)), path)
}

// validate checks the distribution's parameters; which one it is was decided
// by Dist, so parameters of another distribution are errors, not silently ignored.
func (l *Length) validate(d *decoder, path string) {
	if !d.has(path) {
		return
	}
	allowed := map[string][]string{
		DistFixed:   {"value"},
		DistUniform: {"min", "max"},
	}
	params, ok := allowed[l.Dist]
	if !ok {
		if l.Dist == "" {
			d.failf(joinPath(path, "dist"), "missing: one of fixed, uniform")
		} else {
			d.failf(joinPath(path, "dist"), "unknown distribution %q: one of fixed, uniform", l.Dist)
		}
		return
	}
	for _, p := range []string{"value", "min", "max"} {
		used := false
		for _, a := range params {
			used = used || a == p
		}
		if !used && d.has(joinPath(path, p)) {
			d.failf(joinPath(path, p), "not a parameter of dist %s (it takes %v)", l.Dist, params)
		}
	}
	switch l.Dist {
	case DistFixed:
		at := path // the scalar form has no "value" key
		if d.has(joinPath(path, "value")) {
			at = joinPath(path, "value")
		}
		if l.Value < 1 {
			d.failf(at, "want a length of at least 1, got %d", l.Value)
		}
	case DistUniform:
		switch {
		case !d.has(joinPath(path, "min")) || !d.has(joinPath(path, "max")):
			d.failf(path, "uniform needs both min and max")
		case l.Min < 1:
			d.failf(joinPath(path, "min"), "want at least 1, got %d", l.Min)
		case l.Max < l.Min:
			d.failf(joinPath(path, "max"), "want at least min (%d), got %d", l.Min, l.Max)
		}
	}
}
