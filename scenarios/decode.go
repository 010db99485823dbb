package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/internal/didyoumean"
)

// The decoder walks the YAML node tree itself instead of letting yaml.v3 fill
// the structs: yaml.v3's KnownFields only exists on the top-level Decoder, stops
// at nothing useful for nested values, and reports "line N: field x not found in
// type scenarios.Workload". Walking the nodes gives every error with file, line,
// column and the dotted field path, collects all of them in one pass, and knows
// which fields were present (defaults fill only the absent ones).

// nodeDecoder is implemented by types whose YAML shape is not a plain mapping
// (a scalar-or-mapping union such as Length).
type nodeDecoder interface {
	decodeYAML(d *decoder, n *yaml.Node, path string)
}

type decoder struct {
	file   string
	lookup func(string) (string, bool) // environment for ${VAR}
	errs   ErrorList
	nodes  map[string]*yaml.Node // value node of every path present in the file
	raw    map[string]string     // scalar text before ${VAR} substitution, by path
	bad    map[string]bool       // paths whose value could not be decoded: no further errors there
	origin map[*yaml.Node]string // nodes that came from outside the file (an Override): where, instead of a line
	engine *engineOverrides      // the built-in engine's settings, kept for Scenario.ResolveEngine
}

func newDecoder(file string, lookup func(string) (string, bool)) *decoder {
	return &decoder{file: file, lookup: lookup, nodes: map[string]*yaml.Node{}, raw: map[string]string{}, bad: map[string]bool{},
		origin: map[*yaml.Node]string{}}
}

var durationType = reflect.TypeFor[time.Duration]()

// errorf records an error at node n (nil: position unknown) for the field at path.
func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.file, Field: path, Msg: fmt.Sprintf(format, args...)}
	d.bad[path] = true
	if origin, ok := d.origin[n]; ok {
		e.File = origin
	} else if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// failf records an error for the field at path, placed at that field's node or,
// when the field is absent, at the nearest enclosing one present in the file.
// A field that already failed to decode gets no second error: its zero value
// would only produce a misleading one ("want at least 1, got 0").
func (d *decoder) failf(path, format string, args ...any) {
	if d.bad[path] {
		return
	}
	d.errorf(d.at(path), path, format, args...)
}

// has reports whether the field at path was present (and not null) in the file.
func (d *decoder) has(path string) bool {
	_, ok := d.nodes[path]
	return ok
}

// at returns the node of path, or of its nearest present ancestor.
func (d *decoder) at(path string) *yaml.Node {
	for {
		if n, ok := d.nodes[path]; ok {
			return n
		}
		if path == "" {
			return nil
		}
		path = parentPath(path)
	}
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// value decodes n into v. An explicit null counts as absent.
func (d *decoder) value(n *yaml.Node, path string, v reflect.Value) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if isNull(n) {
		return
	}
	d.nodes[path] = n
	if v.CanAddr() {
		if u, ok := v.Addr().Interface().(nodeDecoder); ok {
			u.decodeYAML(d, n, path)
			return
		}
	}
	if v.Type() == durationType {
		if dur, ok := d.duration(n, path); ok {
			v.SetInt(int64(dur))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, path, v.Elem())
	case reflect.Struct:
		d.mapping(n, path, v)
	case reflect.Slice:
		d.sequence(n, path, v)
	case reflect.Map:
		d.dict(n, path, v)
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		d.scalar(n, path, v)
	default:
		// A type of another package (engine/sim's) that the walker does not
		// know: yaml.v3 decodes it, without the walker's strictness.
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.errorf(n, path, "%v", err)
		}
	}
}

// mapping decodes a mapping node into struct v, strictly: unknown and
// duplicate keys are errors.
func (d *decoder) mapping(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain names, got %s", describe(k))
			continue
		}
		kpath := joinPath(path, k.Value)
		if k.Value == "<<" {
			d.errorf(k, path, "merge keys (<<) are not supported: repeat the fields")
			continue
		}
		if prev, dup := first[k.Value]; dup {
			d.errorf(k, kpath, "duplicate key (first at line %d)", prev.Line)
			continue
		}
		first[k.Value] = k
		f, ok := fields.byName[k.Value]
		if !ok {
			d.errorf(k, kpath, "unknown field%s", suggest(k.Value, fields.names))
			continue
		}
		d.value(val, kpath, v.FieldByIndex(f.index))
	}
}

// dict decodes a mapping node into map v, whose keys are names the file
// chooses (request headers, extra body fields): duplicate keys are errors,
// values are decoded like any other (${VAR} in a string value is expanded);
// a value of type any keeps what YAML says it is.
func (d *decoder) dict(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		panic("scenarios: maps are keyed by strings")
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			d.errorf(k, path, "keys must be plain names, got %s", describe(k))
			continue
		}
		kpath := joinPath(path, k.Value)
		if prev, dup := first[k.Value]; dup {
			d.errorf(k, kpath, "duplicate key (first at line %d)", prev.Line)
			continue
		}
		first[k.Value] = k
		e := reflect.New(v.Type().Elem()).Elem()
		if e.Kind() == reflect.Interface {
			var plain any
			if err := val.Decode(&plain); err != nil {
				d.errorf(val, kpath, "%v", err)
				continue
			}
			if plain != nil {
				e.Set(reflect.ValueOf(plain))
			}
		} else {
			d.value(val, kpath, e)
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

func (d *decoder) sequence(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.value(c, fmt.Sprintf("%s[%d]", path, i), s.Index(i))
	}
	v.Set(s)
}

// scalarNode returns n after ${VAR} substitution, or nil (error recorded) when
// n is not a scalar or a variable is undefined.
func (d *decoder) scalarNode(n *yaml.Node, path, want string) *yaml.Node {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "want %s, got %s", want, describe(n))
		return nil
	}
	if !strings.Contains(n.Value, "$") {
		return n
	}
	out, changed, err := expandEnv(n.Value, d.lookup)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return nil
	}
	if !changed {
		return n
	}
	d.raw[path] = n.Value
	c := *n
	c.Value = out
	c.Tag, c.Style = "", 0 // type the substituted text as if it had been written there, unquoted
	return &c
}

func (d *decoder) scalar(n *yaml.Node, path string, v reflect.Value) {
	want := map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false",
		reflect.Float32: "a number", reflect.Float64: "a number"}[v.Kind()]
	if want == "" {
		want = "an integer"
	}
	n = d.scalarNode(n, path, want)
	if n == nil {
		return
	}
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			d.errorf(n, path, "want true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			d.errorf(n, path, "want an integer, got %s", describe(n))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil || v.OverflowUint(u) {
			d.errorf(n, path, "want a non-negative integer, got %s", describe(n))
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var f float64
		if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			hint := ""
			if strings.HasSuffix(path, "rate") || strings.Contains(path, "rates[") {
				if v := strings.ToLower(strings.TrimPrefix(n.Value, "+")); v == "inf" || v == ".inf" || v == "infinity" {
					// vLLM's --request-rate inf: everything at once, which
					// with --max-concurrency is a closed loop.
					hint = " (for vLLM's --request-rate inf with --max-concurrency N, write concurrency: N with requests: M)"
				}
			}
			d.errorf(n, path, "want a finite number, got %s%s", describe(n), hint)
			return
		}
		v.SetFloat(f)
	}
}

// duration reads a Go duration string such as "20s" or "1m30s".
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	const want = `a duration such as "20s" or "1m30s"`
	n = d.scalarNode(n, path, want)
	if n == nil {
		return 0, false
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "want %s, got %s", want, describe(n))
		return 0, false
	}
	return dur, true
}

// describe names what a node holds, for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!int":
		return "the integer " + n.Value
	case "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	}
	return fmt.Sprintf("the string %q", n.Value)
}

// field is one YAML-visible struct field, possibly inside inlined structs.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

type structFields struct {
	list   []field // in declaration order, for encoding
	byName map[string]field
	names  []string
}

var fieldCache sync.Map // reflect.Type → *structFields

func fieldsOf(t reflect.Type) *structFields {
	if c, ok := fieldCache.Load(t); ok {
		return c.(*structFields)
	}
	sf := &structFields{byName: map[string]field{}}
	collectFields(t, nil, sf)
	fieldCache.Store(t, sf)
	return sf
}

func collectFields(t reflect.Type, prefix []int, sf *structFields) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(slices.Clone(prefix), i)
		if strings.Contains(","+opts+",", ",inline,") {
			collectFields(f.Type, index, sf)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fl := field{name: name, index: index, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")}
		sf.list = append(sf.list, fl)
		sf.byName[name] = fl
		sf.names = append(sf.names, name)
	}
}

// suggest proposes the closest known field name, or lists them all.
func suggest(name string, known []string) string {
	best := didyoumean.Closest(name, known, 3)
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	sorted := slices.Sorted(slices.Values(known))
	return " (known fields: " + strings.Join(sorted, ", ") + ")"
}
