package main

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/importer"
	"github.com/llmbench-org/llmbench/scenarios"
)

// newInitCmd writes a commented scenario to start from (0055).
func newInitCmd(cio *cliIO) *cobra.Command {
	var o scenarios.InitOptions
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--engine " + strings.Join(scenarios.InitKinds, "|") + "] [--url URL] [FILE]",
		Short: "Write a commented scenario for an engine to start from (FILE default scenario.yaml, - stdout)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := scenarios.Init(o)
			if err != nil {
				return asUsage(err)
			}
			return writeNewScenario(cio, append(args, "scenario.yaml")[0], data, force)
		},
	}
	cmd.Flags().StringVar(&o.Engine, "engine", scenarios.KindSim, "the engine: "+strings.Join(scenarios.InitKinds, ", "))
	cmd.Flags().StringVar(&o.URL, "url", "", "with --engine external: the engine's URL (default "+scenarios.DefaultInitURL+")")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return cmd
}

// newImportCmd turns another tool's command line into a scenario (0056).
func newImportCmd(cio *cliIO) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:     "import " + strings.Join(importer.Tools(), "|") + " [-o FILE] -- ARGS...",
		Short:   "Write the scenario of a vllm bench serve, sglang.bench_serving, aiperf profile or guidellm benchmark command line; list what it left out",
		Example: "  llmbench import vllm -- --model Qwen/Qwen2.5-7B --request-rate 8 --num-prompts 500 --random-input-len 512",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return asUsage(errors.New("give the tool, then -- and its arguments (llmbench import vllm -- --model M)"))
			}
			res, err := importer.Import(args[0], args[1:])
			if err != nil {
				return asUsage(err)
			}
			for _, d := range res.Dropped {
				fmt.Fprintf(cio.stderr, "llmbench: not carried over: %s\n", d)
			}
			out = cmp.Or(out, args[0]+"-import.yaml")
			if _, err := scenarios.Parse(out, res.YAML); err != nil { // never write a file validate refuses
				return asUsage(fmt.Errorf("the imported scenario: %w", err))
			}
			return writeNewScenario(cio, out, res.YAML, force)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the scenario file to write (default TOOL-import.yaml, - stdout)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the file if it exists")
	return cmd
}

// writeNewScenario writes a new scenario file ("-": stdout) and says what next.
func writeNewScenario(cio *cliIO, path string, data []byte, force bool) error {
	if path == "-" {
		_, err := cio.stdout.Write(data)
		return err
	}
	if err := scenarios.WriteInit(path, data, force); err != nil {
		return asUsage(err)
	}
	fmt.Fprintf(cio.stdout, "wrote %s: llmbench validate %[1]s checks it, llmbench run %[1]s runs it\n", path)
	return nil
}
