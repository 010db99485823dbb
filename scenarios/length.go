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
		return &yaml.Node{Kind: yaml.ScalarNode, Value: t.Value.String()}
	}
	return e.value(reflect.ValueOf(thinkFields(t)), path)
}
