package run

import (
	"errors"
	"fmt"
	"io"
)

// Validate loads each scenario file as a run would (Load: the overrides
// applied, its data files read, its gates checked against its phases) and
// prints one line per valid file on w, or with resolved the scenario with
// every default filled, as a run directory keeps it: `llmbench validate`.
// Every file's errors come back together, as one *ConfigError.
func Validate(paths, sets []string, resolved bool, w io.Writer) error {
	var errs []error
	for _, path := range paths {
		sc, plan, err := Load(path, sets)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if resolved {
			out, err := sc.Resolved()
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "# %s\n%s", path, out)
			continue
		}
		sum := plan.Summary()
		fmt.Fprintf(w, "%s: ok (%s: %d phase(s), %s)\n", path, sc.Name, len(sum.Phases), sum.Dataset)
	}
	if len(errs) > 0 {
		return &ConfigError{Err: errors.Join(errs...)}
	}
	return nil
}
