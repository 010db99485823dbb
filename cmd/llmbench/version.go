package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; a plain
// `go build` or `go run` falls back to the module's build info.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
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

func newVersionCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print llmbench's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cio.stdout, "llmbench %s\n", buildVersion())
			return err
		},
	}
}
