// Package version is llmbench's version string, which the command prints and
// every run records.
package version

import "runtime/debug"

// value is set at build time with
// -ldflags "-X github.com/llmbench-org/llmbench/internal/version.value=v1.2.3";
// a plain `go build` or `go run` falls back to the module's build info.
var value = ""

// String is llmbench's version: the one set at build time, else the module
// version and VCS revision from the build info, else "devel".
func String() string {
	if value != "" {
		return value
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
		if v != "" {
			return v
		}
	}
	return "devel"
}
