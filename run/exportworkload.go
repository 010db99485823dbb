package run

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/peers"
	"github.com/llmbench-org/llmbench/workload"
)

// Formats `llmbench export-workload` writes (decision 2222).
const (
	// ExportMooncake is a Mooncake trace as AIPerf (--custom-dataset-type
	// mooncake_trace) and llmbench (workload.trace, format mooncake) read
	// it: one {timestamp (integer ms), input_length, output_length,
	// hash_ids} per request.
	ExportMooncake = "mooncake"
	// ExportJSONL is one {prompt, output_tokens, max_tokens} per request:
	// vLLM's custom dataset (`vllm bench serve --dataset-name custom`)
	// reads prompt and output_tokens, llmbench's jsonl dataset prompt and
	// max_tokens.
	ExportJSONL = "jsonl"
)

// ExportFormats names the formats for a usage message.
const ExportFormats = "mooncake or jsonl"

// ExportBlockTokens is the block a Mooncake hash id stands for (the
// trace's own, AIPerf's and llmbench's default).
const ExportBlockTokens = 512

// ExportWorkloadFile writes the export to the file output ("" or "-":
// stdout), closing it, and returns how many requests it wrote.
func ExportWorkloadFile(dir, format, output string, stdout io.Writer) (int, error) {
	if output == "" || output == "-" {
		return ExportWorkload(dir, format, stdout)
	}
	f, err := os.Create(output)
	if err != nil {
		return 0, err
	}
	n, err := ExportWorkload(dir, format, f)
	return n, errors.Join(err, f.Close())
}

// ExportWorkload writes the requests the measured phases of the run in dir
// sent, in the order they were meant to go, in format: each one's time (its
// intended send for an open loop, else its actual hand-over, from the
// first), its prompt length (the plan's target, else the engine's count)
// and its max_tokens (else the tokens it got). It returns how many it
// wrote. An unknown format is the user's to fix (*ConfigError).
func ExportWorkload(dir, format string, w io.Writer) (int, error) {
	if format != ExportMooncake && format != ExportJSONL {
		return 0, configError(fmt.Errorf("--format %q: want %s", format, ExportFormats))
	}
	recs, err := peers.RunRecords(dir)
	if err != nil {
		return 0, err
	}
	rows := exportRows(recs)
	enc := json.NewEncoder(w)
	nextHash := int64(0)
	for _, r := range rows {
		var line any
		switch format {
		case ExportMooncake:
			// Hash ids of their own per request: records keep no prompt
			// text, so no shared prefix can be claimed.
			blocks := (r.prompt + ExportBlockTokens - 1) / ExportBlockTokens
			ids := make([]int64, blocks)
			for i := range ids {
				ids[i] = nextHash
				nextHash++
			}
			line = struct {
				Timestamp    int64   `json:"timestamp"`
				InputLength  int     `json:"input_length"`
				OutputLength int     `json:"output_length"`
				HashIDs      []int64 `json:"hash_ids"`
			}{int64(math.Round(float64(r.at) / float64(time.Millisecond))), r.prompt, r.output, ids}
		case ExportJSONL:
			line = struct {
				Prompt       string `json:"prompt"`
				OutputTokens int    `json:"output_tokens"`
				MaxTokens    int    `json:"max_tokens"`
			}{workload.VocabularyText(uint64(r.index), r.prompt), r.output, r.output}
		}
		if err := enc.Encode(line); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

type exportRow struct {
	at             time.Duration
	index          int
	prompt, output int
}

// exportRows are the records as requests to replay, in time order.
func exportRows(recs []client.Record) []exportRow {
	rows := make([]exportRow, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		at := r.Sent
		if r.Scheduled() {
			at = r.Intended
		}
		row := exportRow{at: at, index: r.Index, prompt: r.TargetPromptTokens, output: r.MaxTokens}
		if row.prompt == 0 {
			row.prompt = r.PromptTokens
		}
		if row.output == 0 {
			row.output = r.OutputTokens
		}
		if row.prompt <= 0 || row.output <= 0 {
			continue // nothing a replay can send: a trace row of zero length is skipped by its readers
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b exportRow) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.index, b.index))
	})
	if len(rows) > 0 {
		first := rows[0].at
		for i := range rows {
			rows[i].at -= first
		}
	}
	return rows
}
