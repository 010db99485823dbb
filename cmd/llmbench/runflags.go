package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/scenarios"
)

// addScenarioFlags adds the flags that build a scenario without a file
// (`llmbench run --url …`, decision 0048); given reports whether any was.
func addScenarioFlags(cmd *cobra.Command, f *scenarios.Flags) (given func() bool) {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	f.Bind(fs)
	cmd.Flags().AddGoFlagSet(fs)
	cmd.Flags().Lookup("duration").DefValue = "0" // pflag shows a Go flag's "0s" as a default
	return func() bool {
		given := false
		fs.VisitAll(func(f *flag.Flag) { given = given || cmd.Flags().Changed(f.Name) })
		return given
	}
}

// addOutputFlags adds where the run directories go (--output-dir) and the
// live view (--view). Their old names still work, hidden, with a note
// (oldNames): --runs, and --output, which in k6 and vLLM's bench names
// where results go.
func addOutputFlags(cmd *cobra.Command, opts *runOpts, what string) {
	f := cmd.Flags()
	f.StringVar(&opts.runsDir, "output-dir", "runs", "directory under which the "+what+" is created")
	f.StringVar(&opts.runsDir, "runs", "runs", "the old name of --output-dir")
	f.StringVar(&opts.output, "view", "auto", "live view: auto (TUI on a terminal, plain lines otherwise), tui, plain")
	f.StringVar(&opts.output, "output", "auto", "the old name of --view")
	f.DurationVar(&opts.every, "every", 2*time.Second, "interval of plain progress lines")
	for _, old := range []string{"runs", "output"} {
		_ = f.MarkHidden(old)
	}
}

// oldNames notes each old flag name used: it works, and says the new one.
// It returns the name the live view's flag was given by.
func oldNames(cmd *cobra.Command, w io.Writer) (viewFlag string) {
	for _, o := range []struct{ old, note string }{
		{"runs", "--runs is now --output-dir (the old name still works)"},
		{"output", "--output is now --view, the live view (the old name still works); results go under --output-dir"},
	} {
		if cmd.Flags().Changed(o.old) {
			fmt.Fprintf(w, "llmbench: %s\n", o.note)
		}
	}
	if cmd.Flags().Changed("output") {
		return "--output"
	}
	return "--view"
}
