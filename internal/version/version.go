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
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo is the module's version when it was built as a module
// (`go install github.com/llmbench-org/llmbench/cmd/llmbench@v1.2.3`), else
// "devel" with the VCS revision and "-dirty" for uncommitted changes (a
// build from a checkout, whose module version is "(devel)").
func fromBuildInfo(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "(devel)" {
		v = ""
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v != "" {
		return v
	}
	v = "devel"
	if len(rev) >= 12 {
		v += "+" + rev[:12]
		if dirty {
			v += "-dirty"
		}
	}
	return v
}
