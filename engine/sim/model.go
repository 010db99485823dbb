package sim

// Model is the built-in engine's performance model as a scenario file names
// it: a preset, with the file's parameter overrides and faults decoded onto
// the values it hands out (see scenarios.EngineModel, which it satisfies
// without either package importing the other). Both values have a Validate
// method.
type Model struct{}

// Preset returns the named preset's parameters ("" = DefaultPreset).
func (Model) Preset(name string) (string, any, error) {
	if name == "" {
		name = DefaultPreset
	}
	p, err := Preset(name)
	if err != nil {
		return name, nil, err
	}
	return name, &p, nil
}

// Faults returns no faults, to decode a scenario's faults onto.
func (Model) Faults() any { return &Faults{} }
