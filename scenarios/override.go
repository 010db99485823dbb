package scenarios

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Override replaces one field of a scenario from outside its file, as
// `llmbench run --set workload.rate=20` does: the file stays the record of
// intent, and a sweep script or CI job varies one knob without copying it.
// The override is applied to the YAML before decoding, so it is checked as
// strictly as the file, and the run directory's scenario.yaml shows it.
type Override struct {
	Path  string // dotted field path, e.g. workload.rate
	Value string // YAML: a scalar, a flow mapping such as {dist: uniform, min: 8, max: 64}, or a flow list; empty unsets the field
}

// ParseOverride reads FIELD=VALUE.
func ParseOverride(s string) (Override, error) {
	path, value, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return Override{}, fmt.Errorf("--set %q: want FIELD=VALUE, e.g. workload.rate=20", s)
	}
	for _, seg := range strings.Split(path, ".") {
		if seg == "" || strings.ContainsAny(seg, " \t[]") {
			return Override{}, fmt.Errorf("--set %q: %q is not a dotted field path such as workload.prompt_tokens", s, path)
		}
	}
	return Override{Path: path, Value: value}, nil
}

func (o Override) String() string { return "--set " + o.Path + "=" + o.Value }

// apply writes the override into the file's root mapping, creating the
// mappings on its path that the file lacks. Every node it adds is marked, so
// that an error in it names the --set, not a line of the file.
func (o Override) apply(d *decoder, root *yaml.Node) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(o.Value), &doc); err != nil {
		return fmt.Errorf("the value is not YAML: %v", err)
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(doc.Content) > 0 {
		value = doc.Content[0]
	}
	d.markOrigin(value, o.String())

	segs := strings.Split(o.Path, ".")
	cur := root
	for i, seg := range segs {
		last := i == len(segs)-1
		at := -1
		for k := 0; k+1 < len(cur.Content); k += 2 {
			if cur.Content[k].Value == seg {
				at = k + 1
			}
		}
		if last {
			if at >= 0 {
				cur.Content[at] = value
			} else {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}
				d.markOrigin(key, o.String())
				cur.Content = append(cur.Content, key, value)
			}
			return nil
		}
		switch {
		case at < 0:
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}
			next := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			d.markOrigin(key, o.String())
			d.markOrigin(next, o.String())
			cur.Content = append(cur.Content, key, next)
			cur = next
		case cur.Content[at].Kind == yaml.MappingNode:
			cur = cur.Content[at]
		case isNull(cur.Content[at]):
			next := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			d.markOrigin(next, o.String())
			cur.Content[at] = next
			cur = next
		default:
			prefix := strings.Join(segs[:i+1], ".")
			return fmt.Errorf("%s is %s in the file, not a mapping: set it whole, e.g. --set '%s={...}'",
				prefix, describe(cur.Content[at]), prefix)
		}
	}
	return nil
}

// markOrigin records that n and everything under it came from origin.
func (d *decoder) markOrigin(n *yaml.Node, origin string) {
	d.origin[n] = origin
	for _, c := range n.Content {
		d.markOrigin(c, origin)
	}
}
