package scenarios

import (
	"reflect"

	"github.com/llmbench-org/llmbench/engine/sim"
	"go.yaml.in/yaml/v3"
)

// engineFields is Engine without its custom decoding.
type engineFields Engine

// decodeYAML decodes the engine section in two steps, because the built-in
// engine's overrides (sim) apply on top of a preset that may be named after
// them in the file: first every other field, then the overrides, strictly,
// onto the preset's values.
func (e *Engine) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	rest := *n
	rest.Content = nil
	var overrides *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "sim" && overrides == nil {
			overrides = n.Content[i+1]
			continue
		}
		rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
	}
	d.mapping(&rest, path, reflect.ValueOf((*engineFields)(e)).Elem())
	if e.Kind != KindSim {
		if overrides != nil {
			d.nodes[joinPath(path, "sim")] = overrides // validate reports it as sim-only
		}
		return
	}
	if e.Preset == "" {
		e.Preset = sim.DefaultPreset
	}
	params, err := sim.Preset(e.Preset)
	if err != nil {
		d.errorf(d.at(joinPath(path, "preset")), joinPath(path, "preset"), "%v", err)
	}
	e.Sim = params
	if overrides != nil {
		d.value(overrides, joinPath(path, "sim"), reflect.ValueOf(&e.Sim).Elem())
	}
}
