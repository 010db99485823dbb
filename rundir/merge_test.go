package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// writeShard makes the run directory of shard i of n with the given
// requests.jsonl lines.
func writeShard(t *testing.T, root string, i, n int, lines ...string) string {
	t.Helper()
	dir := filepath.Join(root, "shard"+string(rune('0'+i)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := RunMeta{ID: filepath.Base(dir), Scenario: "s", Seed: 1, Shard: i, Shards: n, StartedAt: time.Unix(1700000000, 0).UTC(),
		Ended: time.Unix(1700000010, 0).UTC(), MaxFailureRate: 0.05, IgnoreEOS: new(false),
		Phases: []PhaseMeta{{Name: "main", Measured: true, Start: 0, End: 10 * time.Second}}}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func recordLine(t *testing.T, id string, index int) string {
	t.Helper()
	b, err := json.Marshal(client.Record{ID: id, Index: index, Phase: "main", Sent: time.Second, End: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A merge that fails leaves nothing behind, so that once the cause is fixed
// the same command works.
func TestFailedMergeLeavesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := writeShard(t, root, 0, 2, recordLine(t, "r-0", 0))
	b := writeShard(t, root, 1, 2, recordLine(t, "r-1", 1), "{this line is broken", recordLine(t, "r-3", 3))
	out := filepath.Join(root, "merged")
	if err := Merge(out, []string{a, b}); err == nil {
		t.Fatal("merged a shard with a broken line inside its records")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("a failed merge left %v beside the shards", names)
	}
	writeShard(t, root, 1, 2, recordLine(t, "r-1", 1), recordLine(t, "r-3", 3))
	if err := Merge(out, []string{a, b}); err != nil {
		t.Fatalf("the merge, run again: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, RunFile)); err != nil {
		t.Errorf("merged run: %v", err)
	}
}

// A merged run keeps the scenario's validity bound and whether it asked for
// exact lengths: the shards ran one scenario, and the report judges the
// merged run by it.
func TestMergeKeepsValidityBounds(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := writeShard(t, root, 0, 2, recordLine(t, "r-0", 0))
	b := writeShard(t, root, 1, 2, recordLine(t, "r-1", 1))
	out := filepath.Join(root, "merged")
	if err := Merge(out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxFailureRate != 0.05 || m.IgnoreEOS == nil || *m.IgnoreEOS {
		t.Errorf("merged max_failure_rate %g, ignore_eos %v: want 0.05 and false", m.MaxFailureRate, m.IgnoreEOS)
	}
}
