package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// The testdata are real: one `llmbench serve --dialect vllm` truth file
// holding an llmbench watching run (peers-watch-*, 19 requests), 20 curl
// requests (the watcher's foreign traffic), AIPerf 0.13.0 (8 requests,
// lines 39-46) and `vllm bench serve` 0.32.0 --save-detailed (8, lines
// 47-54, prefix vt-), GuideLLM 0.8.1 (8, lines 55-62, joined by the
// response id), each tool's own output file, and the watcher's
// summary findings.
func TestRealOutputsJoinTheTruth(t *testing.T) {
	for _, c := range []struct {
		tool, format, file string
		from, to           int
		exclude            string
		served             int
	}{
		{"aiperf", "aiperf", "aiperf_profile_export.jsonl", 39, 47, "", 8},
		{"vllm", "vllm", "vllm_detailed.json", 47, 55, "", 8},
		{"guidellm", "guidellm", "guidellm_benchmarks.json", 55, 63, "", 8},
		{"llmbench", "llmbench", "llmbench_requests.jsonl", 0, 39, "", 39},
	} {
		t.Run(c.tool, func(t *testing.T) {
			r, err := buildRow(joinFlags{tool: c.tool, format: c.format, results: filepath.Join("testdata", c.file),
				truth: "testdata/truth.jsonl", from: c.from, to: c.to, exclude: c.exclude, cpu: 3, baseline: 1, baselineChunks: 4})
			if err != nil {
				t.Fatal(err)
			}
			if r.Served != c.served || r.OK != c.served {
				t.Errorf("served %d (ok %d), want %d", r.Served, r.OK, c.served)
			}
			want := 8
			if c.tool == "llmbench" {
				want = 19 // the watcher's own; the 20 curl requests in its range have no record
			}
			if r.Join != "per request" || r.Joined != want || r.Reported != want {
				t.Errorf("join %q: %d of %d reported, want %d of %d", r.Join, r.Joined, r.Reported, want, want)
			}
			for name, e := range map[string]figErr{"ttft": r.TTFT, "itl": r.ITL, "e2e": r.E2E} {
				// Loopback on one machine: every error is under 100 ms.
				if e.N != want || math.Abs(e.P50) > 100 || e.P99Abs > 100 || e.P99Abs < math.Abs(e.P50) {
					t.Errorf("%s: %+v", name, e)
				}
			}
			if r.Chunks < c.served || r.CPUPerChunkUS != 2e6/float64(r.Chunks-4) {
				t.Errorf("chunks %d, cpu per chunk %.1f µs", r.Chunks, r.CPUPerChunkUS)
			}
		})
	}
}

// TTFT in vLLM's result is the role chunk's arrival, which the built-in
// engine writes with the first token: the same instant. Its ITL list
// holds a gap per chunk after the first, the role chunk's included, so its
// per-request mean is below the per-token truth.
func TestVLLMReadsItsOwnDefinitions(t *testing.T) {
	ms, err := readResults("vllm", "testdata/vllm_detailed.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 || ms[0].id != "vt-0" || ms[7].id != "vt-7" {
		t.Fatalf("ids: %d records, first %q", len(ms), ms[0].id)
	}
	for _, m := range ms {
		if !m.ok || !m.hasTTFT || !m.hasITL || m.outputToken != 16 || m.e2e <= m.ttft {
			t.Errorf("%+v", m)
		}
	}
}

func TestWatcherForeignCount(t *testing.T) {
	f, err := readForeign("testdata/watch_summary.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Key != "foreign_requests" || f.Requests != 20 || f.Severity != "warn" {
		t.Errorf("%+v, want the 20 curl requests counted exactly", f)
	}
	empty := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(empty, []byte(`{"findings":[]}`), 0o644)
	if _, err := readForeign(empty); err == nil {
		t.Error("a summary without the finding read without error")
	}
}

// A synthetic truth and each tool's format with known offsets: the errors
// come out exactly.
func TestErrorsAreToolMinusTruth(t *testing.T) {
	dir := t.TempDir()
	truth := filepath.Join(dir, "truth.jsonl")
	var tb bytes.Buffer
	const n = 100
	for i := range n {
		arr := time.Duration(i) * time.Second
		first := arr + time.Duration(10+i%10)*time.Millisecond
		tr := sim.RequestTruth{ID: fmt.Sprintf("x-%d", i), HeaderID: fmt.Sprintf("x-%d", i), Arrival: arr,
			FirstTokenFlushed: first, OutputTokens: 5, Outcome: sim.OutcomeOK, ChunkTokens: []int{1, 1, 1, 1, 1}}
		for k := range 5 {
			tr.TokenFlushes = append(tr.TokenFlushes, first+time.Duration(k)*4*time.Millisecond)
		}
		tr.Finish = tr.TokenFlushes[4] + time.Millisecond
		b, _ := json.Marshal(tr)
		tb.Write(append(b, '\n'))
	}
	os.WriteFile(truth, tb.Bytes(), 0o644)
	// AIPerf: TTFT 2 ms late, ITL 0.5 ms high, E2E 3 ms late, in ms. Its
	// ITL is (latency − TTFT) ÷ (output tokens − 1), from the record's
	// own figures as AIPerf computes it: (20 − 2) ÷ 4 = 4.5 ms.
	var ab bytes.Buffer
	for i := range n {
		ttft := float64(10+i%10) + 2
		fmt.Fprintf(&ab, `{"metadata":{"x_request_id":"x-%d","benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":%g,"unit":"ms"},"inter_token_latency":{"value":4.5,"unit":"ms"},"request_latency":{"value":%g,"unit":"ms"},"output_sequence_length":{"value":5,"unit":"tokens"}},"error":null}`+"\n",
			i, ttft, float64(10+i%10)+16+1+3)
	}
	os.WriteFile(filepath.Join(dir, "a.jsonl"), ab.Bytes(), 0o644)
	r, err := buildRow(joinFlags{tool: "aiperf", format: "aiperf", results: filepath.Join(dir, "a.jsonl"), truth: truth, to: -1})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-3 }
	if r.Joined != n || !near(r.TTFT.P50, 2) || !near(r.TTFT.P99Abs, 2) || !near(r.ITL.P50, 0.5) || !near(r.E2E.P50, 3) {
		t.Errorf("joined %d, ttft %+v, itl %+v, e2e %+v", r.Joined, r.TTFT, r.ITL, r.E2E)
	}
	// 2 ms over a truth TTFT of 10-19 ms: the median relative error sits between.
	if r.TTFT.RelP50 < 100*2.0/19 || r.TTFT.RelP50 > 100*2.0/10 {
		t.Errorf("relative TTFT error %.1f %%", r.TTFT.RelP50)
	}
	// Without ids only distributions compare: the same offsets.
	noID := strings.ReplaceAll(ab.String(), `"x_request_id":"x-`, `"x_request_id":"other-`)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(noID), 0o644)
	r, err = buildRow(joinFlags{tool: "aiperf", format: "aiperf", results: filepath.Join(dir, "b.jsonl"), truth: truth, to: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Join != "distributions" || !near(r.TTFT.P50, 2) || !near(r.E2E.P50, 3) {
		t.Errorf("distributions: %q ttft %+v e2e %+v", r.Join, r.TTFT, r.E2E)
	}
}

func TestCPUCell(t *testing.T) {
	for _, c := range []struct {
		r    row
		want string
	}{
		{row{}, "–"},
		{row{Chunks: 100, CPUPerChunkUS: 12.34}, "12.3 µs"},
		{row{Chunks: 100, CPUPerChunkUS: -3}, "below start-up noise"},
	} {
		if got := cpuCell(c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

func TestCheckNamesEveryProblem(t *testing.T) {
	good := row{Tool: "aiperf", Streams: 8, Served: 16, OK: 16, Reported: 16, Joined: 16, Join: "per request",
		TTFT: figErr{N: 16}, ITL: figErr{N: 16}, E2E: figErr{N: 16}, Foreign: foreign{Key: "foreign_requests", Requests: 16}}
	if p := problems(good); len(p) != 0 {
		t.Fatalf("a good row: %v", p)
	}
	for _, c := range []struct {
		name string
		edit func(*row)
		want string
	}{
		{"exit", func(r *row) { r.Exit = 1 }, "exit status 1"},
		{"failed requests", func(r *row) { r.OK = 15 }, "answered 15 of 16"},
		{"not joined", func(r *row) { r.Joined = 10 }, "10 of the 16"},
		{"no output", func(r *row) { r.Join = "" }, "no per-request output"},
		{"distribution short", func(r *row) { r.Join, r.Reported = "distributions", 12 }, "reported 12"},
		{"no ITL", func(r *row) { r.ITL.N = 0 }, "no ITL"},
		{"foreign lower bound", func(r *row) { r.Foreign.Key = "foreign_requests_min" }, "not exactly"},
		{"foreign miscounted", func(r *row) { r.Foreign.Requests = 17 }, "not exactly its 16"},
	} {
		r := good
		c.edit(&r)
		p := problems(r)
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: %v, want one problem naming %q", c.name, p, c.want)
		}
	}
}

func TestTableAndCheckCommands(t *testing.T) {
	dir := t.TempDir()
	rows := filepath.Join(dir, "rows.jsonl")
	var out bytes.Buffer
	err := run([]string{"join", "-tool", "vllm", "-format", "vllm", "-results", "testdata/vllm_detailed.json",
		"-truth", "testdata/truth.jsonl", "-from", "47", "-to", "55", "-streams", "4", "-cpu", "2", "-baseline-cpu", "1",
		"-watch", "testdata/watch_summary.json"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rows, out.Bytes(), 0o644)
	out.Reset()
	if err := run([]string{"table", rows}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| vllm | 4 | 8 (8) | 8 of 8 by id |") || !strings.Contains(out.String(), "| 2.0 (1.0) | 20 of 8 |") {
		t.Errorf("table:\n%s", out.String())
	}
	// The watcher in the testdata counted the curl requests (20), not
	// vLLM's 8: check says so.
	if err := run([]string{"check", rows}, &out); err == nil || !strings.Contains(err.Error(), "not exactly its 8") {
		t.Errorf("check: %v", err)
	}
	out.Reset()
	if err := run([]string{"chunks", "-truth", "testdata/truth.jsonl", "-from", "47", "-to", "55"}, &out); err != nil || out.String() != "128\n" {
		t.Errorf("chunks of vLLM's 8 requests of 16 tokens: %q, %v", out.String(), err)
	}
	if err := run([]string{"nope"}, &out); err == nil {
		t.Error("an unknown command ran")
	}
}

// cputime counts the CPU of the whole tree: a shell whose child burns CPU
// (reaped by the shell) shows it, and the exit status comes back.
func TestCPUTimeCountsReapedChildren(t *testing.T) {
	f := filepath.Join(t.TempDir(), "time.txt")
	code, err := cputimeCmd([]string{"-o", f, "sh", "-c", `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; exit 3`}, io.Discard)
	if err != nil || code != 3 {
		t.Fatalf("exit %d, %v", code, err)
	}
	b, _ := os.ReadFile(f)
	var user, sys float64
	if _, err := fmt.Sscan(string(b), &user, &sys); err != nil || user+sys < 0.05 {
		t.Errorf("%q: the child's CPU is missing", b)
	}
	if code, err := cputimeCmd([]string{"-o", f}, io.Discard); err == nil || code != 2 {
		t.Errorf("no command: exit %d, %v", code, err)
	}
}
