package scenarios

import (
	"reflect"

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

// encodeYAML writes exactly the parameters of the distribution, zero or not
// (a uniform min of 0s is a value, not an absence).
func (l Length) encodeYAML(e *encoder, path string) *yaml.Node {
	if l.Dist == DistFixed {
		return e.value(reflect.ValueOf(l.Value), path)
	}
	m := e.params(path, "dist", l.Dist)
	switch l.Dist {
	case DistUniform:
		e.add(m, path, "min", l.Min, "max", l.Max)
	case DistNormal, DistLognormal:
		e.add(m, path, "mean", l.Mean, "stddev", l.StdDev, "min", l.Min)
		if l.Max > 0 {
			e.add(m, path, "max", l.Max)
		}
	case DistEmpirical:
		e.add(m, path, "file", l.File)
	}
	return m
}

// thinkFields is Think without its custom YAML shape.
type thinkFields Think

func (t *Think) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		if v, ok := d.duration(n, path); ok {
			*t = Think{Dist: DistFixed, Value: v}
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a duration or a mapping such as {dist: exponential, mean: 2s}, got %s", describe(n))
		return
	}
	d.mapping(n, path, reflect.ValueOf((*thinkFields)(t)).Elem())
}

func (t Think) encodeYAML(e *encoder, path string) *yaml.Node {
	if t.Dist == DistFixed {
		return e.value(reflect.ValueOf(t.Value), path)
	}
	m := e.params(path, "dist", t.Dist)
	switch t.Dist {
	case DistUniform:
		e.add(m, path, "min", t.Min, "max", t.Max)
	case ThinkExponential:
		e.add(m, path, "mean", t.Mean)
	}
	return m
}

// params starts the mapping of a union type with the given key and value pairs.
func (e *encoder) params(path string, kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	e.add(m, path, kv...)
	return m
}

// add appends key and value pairs to mapping m of the field at path.
func (e *encoder) add(m *yaml.Node, path string, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		key := kv[i].(string)
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, e.value(reflect.ValueOf(kv[i+1]), joinPath(path, key)))
	}
}

// stageFields is Stage without its custom YAML shape.
type stageFields Stage

// decodeYAML remembers which target the stage names, so that a target of 0
// keeps its kind through Resolved.
func (s *Stage) decodeYAML(d *decoder, n *yaml.Node, path string) {
	d.mapping(n, path, reflect.ValueOf((*stageFields)(s)).Elem())
	s.ofRate = d.has(joinPath(path, "rate"))
}

func (s Stage) encodeYAML(e *encoder, path string) *yaml.Node {
	m := e.params(path, "duration", s.Duration)
	if s.ofRate {
		e.add(m, path, "rate", s.Rate)
	} else {
		e.add(m, path, "concurrency", s.Concurrency)
	}
	return m
}
