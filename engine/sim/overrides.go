package sim

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// WithParamOverrides returns p with "key=value" overrides applied, keys
// being the YAML names of Params fields ("decode_base=4ms",
// "prefix_cache=false"). Values are YAML scalars or flow sequences. The
// result is not validated (call Validate).
func WithParamOverrides(p Params, kvs []string) (Params, error) {
	err := applyOverrides(&p, kvs)
	return p, err
}

// WithFaultOverrides returns f with "key=value" overrides applied, keys
// being the YAML names of Faults fields ("error_rate=0.1",
// "error_statuses=[429,503]"). The result is not validated.
func WithFaultOverrides(f Faults, kvs []string) (Faults, error) {
	err := applyOverrides(&f, kvs)
	return f, err
}

func applyOverrides(dst any, kvs []string) error {
	var errs []error
	for _, kv := range kvs {
		key, value, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			errs = append(errs, fmt.Errorf("override %q: want key=value", kv))
			continue
		}
		var doc bytes.Buffer
		fmt.Fprintf(&doc, "%s: %s\n", key, value)
		dec := yaml.NewDecoder(&doc)
		dec.KnownFields(true)
		if err := dec.Decode(dst); err != nil {
			errs = append(errs, fmt.Errorf("override %q: %w", kv, err))
		}
	}
	return errors.Join(errs...)
}
