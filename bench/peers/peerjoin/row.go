package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// row is one tool at one scale: the table's line, kept as JSON so a run's
// rows can be read back (bench/peers/run writes rows.jsonl).
type row struct {
	Tool    string `json:"tool"`
	Streams int    `json:"streams"`
	Exit    int    `json:"exit"` // the tool's exit status
	// Served is the requests the engine finished for the tool (its truth
	// lines), OK those answered in full; Reported the requests the tool's
	// output lists, Joined those matched to the truth by id.
	Served   int    `json:"served"`
	OK       int    `json:"ok"`
	Reported int    `json:"reported"`
	Joined   int    `json:"joined"`
	Join     string `json:"join"` // "per request" or "distributions"
	TTFT     figErr `json:"ttft"`
	ITL      figErr `json:"itl"`
	E2E      figErr `json:"e2e"`
	// Chunks is the token-carrying chunks the engine streamed to the tool;
	// CPU the tool's process tree's CPU seconds (user + system, its reaped
	// children included) and Baseline that of the same tool sending two
	// requests (its start-up and exit, and BaselineChunks chunks);
	// CPUPerChunkUS = (CPU − Baseline) ÷ (Chunks − BaselineChunks), in µs.
	Chunks         int     `json:"chunks"`
	CPU            float64 `json:"cpu_s"`
	Baseline       float64 `json:"baseline_cpu_s"`
	BaselineChunks int     `json:"baseline_chunks"`
	CPUPerChunkUS  float64 `json:"cpu_per_chunk_us"`
	Foreign        foreign `json:"foreign"`
}

type joinFlags struct {
	tool, format, results, truth, exclude, watch string
	from, to, streams, exit, baselineChunks      int
	cpu, baseline                                float64
}

func joinCmd(args []string, out io.Writer) error {
	var f joinFlags
	fs := flag.NewFlagSet("join", flag.ContinueOnError)
	fs.StringVar(&f.tool, "tool", "", "the tool's name in the table")
	fs.StringVar(&f.format, "format", "", "its per-request output: llmbench, vllm, aiperf, guidellm")
	fs.StringVar(&f.results, "results", "", "the tool's per-request output file (empty: the tool wrote none)")
	fs.StringVar(&f.truth, "truth", "", "the engine's truth.jsonl")
	fs.IntVar(&f.from, "from", 0, "the tool's first truth line (0-based)")
	fs.IntVar(&f.to, "to", -1, "the line after its last (-1: to the end)")
	fs.StringVar(&f.exclude, "exclude", "", "leave out truth whose id starts with this (the watching run's)")
	fs.IntVar(&f.streams, "streams", 0, "the concurrency the tool ran at")
	fs.IntVar(&f.exit, "exit", 0, "the tool's exit status")
	fs.Float64Var(&f.cpu, "cpu", 0, "the tool's CPU seconds")
	fs.Float64Var(&f.baseline, "baseline-cpu", 0, "the tool's CPU seconds for two requests")
	fs.IntVar(&f.baselineChunks, "baseline-chunks", 0, "the chunks streamed in those two requests")
	fs.StringVar(&f.watch, "watch", "", "the watching llmbench run's summary.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.tool == "" || f.truth == "" {
		return fmt.Errorf("join needs -tool and -truth")
	}
	r, err := buildRow(f)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

func buildRow(f joinFlags) (row, error) {
	r := row{Tool: f.tool, Streams: f.streams, Exit: f.exit, CPU: f.cpu, Baseline: f.baseline, BaselineChunks: f.baselineChunks}
	ts, err := readTruth(f.truth, f.from, f.to, f.exclude)
	if err != nil {
		return r, err
	}
	r.Served = len(ts)
	for _, t := range ts {
		r.Chunks += t.chunks
		if t.ok {
			r.OK++
		}
	}
	if n := r.Chunks - f.baselineChunks; n > 0 {
		r.CPUPerChunkUS = 1e6 * (f.cpu - f.baseline) / float64(n)
	}
	if f.watch != "" {
		if r.Foreign, err = readForeign(f.watch); err != nil {
			return r, err
		}
	}
	if f.results == "" {
		return r, nil
	}
	ms, err := readResults(f.format, f.results)
	if err != nil {
		return r, err
	}
	r.Reported = len(ms)
	pairs, _ := pairUp(ms, ts)
	r.Joined = len(pairs)
	r.Join = "per request"
	if len(pairs) == 0 {
		r.Join = "distributions"
	}
	errs := make([]figErr, len(figures))
	for i, fig := range figures {
		if len(pairs) > 0 {
			errs[i] = joinErrors(pairs, fig)
		} else {
			errs[i] = distErrors(ms, ts, fig)
		}
	}
	r.TTFT, r.ITL, r.E2E = errs[0], errs[1], errs[2]
	return r, nil
}

// chunksCmd prints the token-carrying chunks the engine streamed in truth
// lines [from, to): a baseline run's, for join's -baseline-chunks.
func chunksCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("chunks", flag.ContinueOnError)
	truth := fs.String("truth", "", "the engine's truth.jsonl")
	from := fs.Int("from", 0, "the first line (0-based)")
	to := fs.Int("to", -1, "the line after the last (-1: to the end)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ts, err := readTruth(*truth, *from, *to, "")
	if err != nil {
		return err
	}
	n := 0
	for _, t := range ts {
		n += t.chunks
	}
	_, err = fmt.Fprintln(out, n)
	return err
}
