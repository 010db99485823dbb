package workload

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// parseAgentic reads data in format ("weka" or "copilot").
func parseAgentic(format string, r io.Reader) (*agentTrace, error) {
	if format == "weka" {
		return parseWeka("f", r)
	}
	return parseCopilot("f", r)
}

func FuzzParseAgentic(f *testing.F) {
	// Small seeds: the examples (scenarios/agentic-*.jsonl) are kilobytes,
	// and minimizing an input that large takes the fuzzer minutes.
	f.Add([]byte(`{"id":"a","requests":[{"t":0,"type":"n","in":3,"out":1},{"t":1,"type":"subagent","agent_id":"x","requests":[{"t":1,"type":"s","in":2,"out":1}]},{"t":2,"type":"n","in":1,"out":1}]}`))
	f.Add([]byte(`{"session_id":"p","turns":[{"llm_calls":[{"call_id":"c","start_time":0,"end_time":5,"input_tokens":4,"output_tokens":1,"tool_batch":{"tools":[{"result_tokens":2}]}},{"start_time":9,"end_time":9,"input_tokens":2,"output_tokens":1}]}]}
{"session_id":"k","parent_session_id":"p","parent_call_id":"c","turns":[{"user_tokens":1,"llm_calls":[{"start_time":6,"end_time":7,"input_tokens":1,"output_tokens":1}]}]}`))
	// The published Copilot schema (agentic_copilot_published.go).
	f.Add([]byte(`{"session_id":"a","turns":[{"llm_calls":[{"message_id":"m","timestamp":"2026-06-01T10:00:00.0000000","duration_ms":5,"tokens":{"prompt":4,"completion":1},"message_metadata":[{"role":"system","token_len":2}]},{"timestamp":"2026-06-01T10:00:01Z","tokens":{}},{"timestamp":"2026-06-01T10:00:02Z","tokens":{"prompt":7,"completion":1,"cached":4}}],"tool_batches":[{"request_id":"m","function_calls":[{"name":"x"},{"name":"y"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"weka", "copilot"} {
			sameWhenStreamed(t, data, func(r io.Reader) (*agentTrace, error) { return parseAgentic(format, r) })
			a, err := parseAgentic(format, bytes.NewReader(data))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f") && !strings.HasPrefix(err.Error(), "session ") {
					t.Fatalf("%s: error does not name the file: %v", format, err)
				}
				continue
			}
			checkAgentTrace(t, format, a)
		}
	})
}

// checkAgentTrace holds a trace to the model's invariants, and its small
// requests to their planned lengths.
func checkAgentTrace(t *testing.T, format string, a *agentTrace) {
	t.Helper()
	if len(a.roots) == 0 || len(a.starts) != len(a.roots) || a.starts[0] != 0 {
		t.Fatalf("%s: roots %v starts %v", format, a.roots, a.starts)
	}
	for k := 1; k < len(a.starts); k++ {
		if a.starts[k] < a.starts[k-1] {
			t.Fatalf("%s: root starts go back: %v", format, a.starts)
		}
	}
	calls := 0
	for s, sess := range a.sessions {
		if len(sess.calls) == 0 || len(sess.spawns) != len(sess.calls)+1 || a.first[s] != calls {
			t.Fatalf("%s: session %d: %d calls, %d spawn slots, first %d (want %d)", format, s, len(sess.calls), len(sess.spawns), a.first[s], calls)
		}
		if sess.parent >= len(a.sessions) || sess.parent == s {
			t.Fatalf("%s: session %d has parent %d", format, s, sess.parent)
		}
		for _, slot := range sess.spawns {
			for _, sp := range slot {
				if sp.delay < 0 || a.sessions[sp.session].parent != s {
					t.Fatalf("%s: session %d spawns %+v, whose parent is %d", format, s, sp, a.sessions[sp.session].parent)
				}
			}
		}
		for c, call := range sess.calls {
			if call.gap < 0 || call.output < 1 || call.user < 0 {
				t.Fatalf("%s: session %d call %d: %+v", format, s, c, call)
			}
			if gs, gc := a.locate(calls + c); gs != s || gc != c {
				t.Fatalf("%s: request %d located at %d/%d, want %d/%d", format, calls+c, gs, gc, s, c)
			}
		}
		calls += len(sess.calls)
	}
	if calls != a.calls {
		t.Fatalf("%s: %d calls counted, %d recorded", format, calls, a.calls)
	}
	rows := &agentRows{trace: a, text: agentText{seed: 1}}
	for i := range min(a.calls, 20) {
		if s, c := a.locate(i); plannedUpTo(a, s, c) > 20000 {
			continue // a long prompt costs the fuzzer more than it finds
		}
		msgs, tokens, out := rows.request(i)
		if CountTokens(msgs) != tokens || out < 1 {
			t.Fatalf("%s: request %d: %d words for %d planned tokens", format, i, CountTokens(msgs), tokens)
		}
	}
}

// A session or a line over inputfile.DataLineBytes is refused with the
// file's name and the bound, in both formats.
func TestAgenticRecordBound(t *testing.T) {
	long := bytes.Repeat([]byte(" "), inputfile.DataLineBytes+1)
	weka := append([]byte(`{"id":"a","requests":[{"t":0,"type":"n","in":3,"out":1}]}`+"\n"+`{"id":"b",`), long...)
	_, err := parseWeka("w.jsonl", bytes.NewReader(weka))
	if err == nil || !strings.Contains(err.Error(), "w.jsonl") || !strings.Contains(err.Error(), fmt.Sprint(inputfile.DataLineBytes>>20)+" MiB") {
		t.Errorf("weka: %v", err)
	}
	copilot := append([]byte(`{"session_id":"a","turns":[]}`+"\n"), long...)
	_, err = parseCopilot("c.jsonl", bytes.NewReader(copilot))
	if want := fmt.Sprintf("c.jsonl:2: line longer than %d MiB", inputfile.DataLineBytes>>20); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("copilot: %v, want %q", err, want)
	}
}

// plannedUpTo bounds the tokens of session s's history up to call c.
func plannedUpTo(a *agentTrace, s, c int) int {
	sess := a.sessions[s]
	n := sess.system
	for _, call := range sess.calls[:c+1] {
		n += call.user + call.output
		for _, k := range call.tools {
			n += k
		}
	}
	return n
}
