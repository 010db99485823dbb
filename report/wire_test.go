package report

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

func TestWireCountedAndNoted(t *testing.T) {
	var counts map[string]int
	for _, w := range []string{"", "gzip", "gzip linger", "br+gzip", "linger", "\x1b[31mevil", "gzip+zstd"} {
		counts = countWire(counts, &client.Record{Wire: w})
	}
	want := map[string]int{"gzip": 2, "br+gzip": 1, "linger": 2, "other": 2}
	if len(counts) != len(want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("counts[%q] = %d, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
	note := wireNote(Health{Wire: counts})
	for _, s := range []string{"5 responses came in a content coding", "br+gzip 1, gzip 2, other 2", "2 connections stayed open"} {
		if !strings.Contains(note, s) {
			t.Errorf("note %q, want it to say %q", note, s)
		}
	}
	if wireNote(Health{}) != "" {
		t.Error("a note for a run whose responses all came plain")
	}
}
