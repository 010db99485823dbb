// Command peerjoin is bench/peers/run's arithmetic: it holds one tool's
// per-request results against the built-in engine's ground truth (TTFT,
// ITL and E2E error), divides the tool's CPU time by the chunks the engine
// streamed to it, and reads what the watching llmbench run's reconciliation
// said about the tool's traffic (join); and it prints the rows as the
// BENCHMARKS.md table (table). How the comparison is made: decision 2210.
//
//	peerjoin join -tool aiperf -format aiperf -results DIR/profile_export.jsonl \
//	    -truth truth.jsonl -from 120 -to 376 -exclude peers-watch- -streams 64 \
//	    -cpu 12.3 -baseline-cpu 9.8 -watch WATCHRUN/summary.json >> rows.jsonl
//	peerjoin table rows.jsonl
//	peerjoin check rows.jsonl
//	peerjoin cputime -o time.txt COMMAND ARGS…
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "cputime" {
		code, err := cputimeCmd(os.Args[2:], os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerjoin:", err)
		}
		os.Exit(code)
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peerjoin:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: peerjoin join|table|check|chunks|cputime …")
	}
	switch args[0] {
	case "join":
		return joinCmd(args[1:], out)
	case "table":
		if len(args) != 2 {
			return fmt.Errorf("usage: peerjoin table ROWS.jsonl")
		}
		return tableCmd(args[1], out)
	case "chunks":
		return chunksCmd(args[1:], out)
	case "check":
		if len(args) != 2 {
			return fmt.Errorf("usage: peerjoin check ROWS.jsonl")
		}
		return checkCmd(args[1], out)
	}
	return fmt.Errorf("unknown command %q (join, table, check, chunks)", args[0])
}
