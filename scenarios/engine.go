package scenarios

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

// EngineModel is the built-in engine's performance model as a scenario needs
// it: the engine's package provides it (sim.Model), so that a scenario carries
// the model's settings as plain data without depending on the engine. A
// scenario's engine.sim and engine.faults are decoded onto what it returns
// by ResolveEngine, strictly, each error at its file:line.
type EngineModel interface {
	// Preset returns the named preset ("" = the default; its name is
	// returned) as a pointer to the yaml-tagged parameters onto which the
	// file's overrides are decoded, or an error naming the presets.
	Preset(name string) (resolved string, params any, err error)
	// Faults returns a pointer to the yaml-tagged faults, none injected.
	Faults() any
}

// engineFields is Engine without its custom decoding.
type engineFields Engine

// engineOverrides are the built-in engine's settings as the file gave them,
// kept undecoded until ResolveEngine knows the model they belong to.
type engineOverrides struct {
	d           *decoder   // the file's decoder: positions, --set origins, ${VAR}
	sim, faults *yaml.Node // nil when absent
	path        string     // "engine"
}

// decodeYAML decodes the engine section, except the built-in engine's
// settings (sim, faults): those are the model's to read, and are kept as the
// file's plain data until ResolveEngine.
func (e *Engine) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	rest := *n
	rest.Content = nil
	var sim, faults *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch v := n.Content[i+1]; {
		case n.Content[i].Value == "sim" && sim == nil:
			sim = v
		case n.Content[i].Value == "faults" && faults == nil:
			faults = v
		default:
			rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
		}
	}
	d.mapping(&rest, path, reflect.ValueOf((*engineFields)(e)).Elem())
	for key, v := range map[string]*yaml.Node{"sim": sim, "faults": faults} {
		if v == nil || isNull(v) {
			continue
		}
		p := joinPath(path, key)
		d.nodes[p] = v // present: validate reports it where it does not belong
		var plain any
		if err := v.Decode(&plain); err != nil {
			d.errorf(v, p, "%v", err)
			continue
		}
		if key == "sim" {
			e.Sim = plain
		} else {
			e.Faults = plain
		}
	}
	d.engine = &engineOverrides{d: d, sim: sim, faults: faults, path: path}
}

// ResolveEngine decodes the built-in engine's settings onto model: Sim
// becomes the preset's parameters with the file's overrides applied, Faults
// the faults, and Preset the preset's name. Every error names its file:line,
// as an ErrorList. Scenarios of other engine kinds are left as they are.
func (s *Scenario) ResolveEngine(model EngineModel) error {
	e := &s.Engine
	o := s.src.engine
	if e.Kind != KindSim || o == nil {
		return nil
	}
	d := o.d
	d.errs = nil
	at := func(f string) string { return joinPath(o.path, f) }
	name, params, err := model.Preset(e.Preset)
	if err != nil {
		d.errorf(d.at(at("preset")), at("preset"), "%v", err)
		return d.errs.sorted()
	}
	e.Preset = name
	if o.sim != nil && !isNull(o.sim) {
		d.value(o.sim, at("sim"), reflect.ValueOf(params).Elem())
		if !d.bad[at("sim")] {
			placeErrors(d, at("sim"), "", validate(params))
		}
	}
	e.Sim = params
	faults := model.Faults()
	if o.faults != nil && !isNull(o.faults) {
		d.value(o.faults, at("faults"), reflect.ValueOf(faults).Elem())
		placeErrors(d, at("faults"), "faults.", validate(faults))
	}
	e.Faults = faults
	if len(d.errs) > 0 {
		return d.errs.sorted()
	}
	return nil
}

// validate calls v's Validate method, if it has one.
func validate(v any) error {
	if c, ok := v.(interface{ Validate() error }); ok {
		return c.Validate()
	}
	return nil
}
