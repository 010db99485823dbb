package scenarios

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/redact"
	"go.yaml.in/yaml/v3"
)

// nodeEncoder is implemented by types with their own YAML shape (the inverse of nodeDecoder).
type nodeEncoder interface {
	encodeYAML(e *encoder, path string) *yaml.Node
}

// encoder turns a Scenario back into YAML nodes: durations as Go strings,
// fields in declaration order, and every value that came from ${VAR} written
// back as the original ${VAR} text.
type encoder struct {
	raw map[string]string
}

// Resolved returns the scenario as the run directory keeps it: every default
// filled, so the file alone says what ran; values substituted from the
// environment appear as the ${VAR} text that named them, never their values.
// Parsing the result gives back the same Scenario.
func (s Scenario) Resolved() ([]byte, error) {
	e := &encoder{raw: s.raw}
	root := e.value(reflect.ValueOf(s), "")
	doc := &yaml.Node{
		Kind:        yaml.DocumentNode,
		HeadComment: "Resolved by llmbench: defaults filled; ${VAR} values are not expanded here.",
		Content:     []*yaml.Node{root},
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("resolve scenario %s: %w", s.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("resolve scenario %s: %w", s.Name, err)
	}
	return buf.Bytes(), nil
}

func (e *encoder) value(v reflect.Value, path string) *yaml.Node {
	if raw, ok := e.raw[path]; ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: raw}
	}
	if u, ok := v.Interface().(nodeEncoder); ok {
		return u.encodeYAML(e, path)
	}
	if v.Type() == durationType {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: time.Duration(v.Int()).String()}
	}
	switch v.Kind() {
	case reflect.Interface: // plain data (the built-in engine's settings)
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		return e.value(v.Elem(), path)
	case reflect.Pointer:
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		return e.value(v.Elem(), path)
	case reflect.Struct:
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, f := range fieldsOf(v.Type()).list {
			fv := v.FieldByIndex(f.index)
			fpath := joinPath(path, f.name)
			// A nil list or map is left out like an omitempty field: written
			// as [] it would read back as an empty one, not as nil.
			if (f.omitEmpty && isEmpty(fv)) || ((fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil()) {
				if _, substituted := e.raw[fpath]; !substituted {
					continue
				}
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.name}, e.value(fv, fpath))
		}
		return m
	case reflect.Map: // keyed by names the file chose, written in their order
		m := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			val := e.value(v.MapIndex(k), joinPath(path, k.String()))
			if headers(path) {
				val = headerValue(k.String(), val)
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.String()}, val)
		}
		return m
	case reflect.Slice:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for i := range v.Len() {
			c := e.value(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			if c.Kind != yaml.ScalarNode {
				seq.Style = 0
			}
			seq.Content = append(seq.Content, c)
		}
		return seq
	case reflect.String:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.String()}
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(v.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatInt(v.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatUint(v.Uint(), 10)}
	case reflect.Float32, reflect.Float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v.Float(), 'g', -1, 64)}
	}
	var n yaml.Node // a type the encoder does not know: yaml.v3 encodes it
	if err := n.Encode(v.Interface()); err != nil {
		panic(fmt.Sprintf("scenarios: cannot encode %s (field %s): %v", v.Type(), path, err))
	}
	return &n
}

// headers: a map of HTTP headers (request.headers, and any other field of
// that name).
func headers(path string) bool { return path == "headers" || strings.HasSuffix(path, ".headers") }

// headerValue is how a header's value is written back: a ${VAR} as its
// text (already so), a credential's literal value as redact.Marker (the
// run directory never holds one: name it with ${VAR} to rerun the file),
// any other value through the redaction policy.
func headerValue(name string, n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.ScalarNode || n.Style == yaml.DoubleQuotedStyle && strings.Contains(n.Value, "${") {
		return n
	}
	out := *n
	if redact.SecretHeader(name) {
		out.Value = redact.Marker
		out.LineComment = "a literal credential is not kept: give it as ${VAR}"
	} else {
		out.Value = redact.Text(n.Value)
	}
	return &out
}

// isEmpty is IsZero, looking through the interface and pointer that carry
// plain data (no faults set is as empty as no faults field).
func isEmpty(v reflect.Value) bool {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
	}
	return v.IsZero()
}
