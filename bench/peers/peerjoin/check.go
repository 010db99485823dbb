package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// checkCmd fails unless every row shows a tool that ran cleanly against the
// truth: what CI holds bench/peers/run's small run to.
func checkCmd(path string, out io.Writer) error {
	rows, err := readRows(path)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: no rows", path)
	}
	var bad []string
	for _, r := range rows {
		for _, p := range problems(r) {
			bad = append(bad, fmt.Sprintf("%s at %d streams: %s", r.Tool, r.Streams, p))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	_, err = fmt.Fprintf(out, "peerjoin: %d rows checked: every tool exited 0, every request answered in full and reported, every figure compared, every tool's traffic counted exactly as foreign\n", len(rows))
	return err
}

// problems lists what is wrong with one row: the tool failed, the engine
// did not answer everything in full, the tool's output does not account
// for every request (by id where it sends ids), a figure could not be
// compared, or the watching run's reconciliation did not count exactly the
// tool's requests as foreign.
func problems(r row) []string {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	if r.Exit != 0 {
		add("exit status %d", r.Exit)
	}
	if r.Served == 0 || r.OK != r.Served {
		add("the engine answered %d of %d requests in full", r.OK, r.Served)
	}
	switch r.Join {
	case "":
		add("no per-request output read")
	case "per request":
		if r.Joined != r.Served || r.Reported != r.Served {
			add("%d of the %d requests it reported joined the engine's %d by id", r.Joined, r.Reported, r.Served)
		}
	default:
		if r.Reported != r.Served {
			add("it reported %d requests, the engine served it %d", r.Reported, r.Served)
		}
	}
	for _, f := range []struct {
		name string
		e    figErr
	}{{"TTFT", r.TTFT}, {"ITL", r.ITL}, {"E2E", r.E2E}} {
		if f.e.N == 0 && r.Join != "" {
			add("no %s to compare", f.name)
		}
	}
	if r.Foreign.Key != "foreign_requests" || int(r.Foreign.Requests) != r.Served {
		add("the watching run's reconciliation said %q (%s %.0f), not exactly its %d requests", r.Foreign.Verdict, r.Foreign.Key, r.Foreign.Requests, r.Served)
	}
	return p
}

func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}
