package rundir

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// The parallel reader's line splitter cuts lines, and holds them to the
// bound on one, exactly as the line reader every other run-directory file
// goes through (inputfile.Lines): the same lines in the same order, and a
// line over the bound refused at the same line number, whatever the block
// size. Seeded with a real run's requests.jsonl.
func FuzzSplitLines(f *testing.F) {
	for _, seed := range []string{
		"", "a\nbb\n", "a\r\nbb\r\n", "a\nbb", "\n\n\n", "12345678\r\n", "123456789\n", "1234567\r\r\n",
		"\x00\xff\n\xfe", "a\n123456789012345678901234567890\nb\n",
	} {
		f.Add([]byte(seed), uint8(3), uint8(8))
	}
	if real, err := inputfile.ReadAll(filepath.Join("..", "report", "testdata", "v1-run", RequestsFile), inputfile.RunFile); err == nil {
		f.Add(real, uint8(200), uint8(255))
		f.Add(real, uint8(7), uint8(120))
	}
	f.Fuzz(func(t *testing.T, data []byte, block, maxLine uint8) {
		k := inputfile.Kind{What: inputfile.RunLines.What, MaxLine: int(maxLine) + 1}
		var want []string
		lr := inputfile.NewLines(bytes.NewReader(data), "r.jsonl", k)
		for lr.Next() {
			want = append(want, string(lr.Bytes()))
		}
		wantErr := lr.Err()

		var got []string
		err := splitLinesWithin(bytes.NewReader(data), "r.jsonl", int(block)+1, k.MaxLine, nil, func(b *lineBatch) bool {
			if b.firstNo != len(got)+1 {
				t.Fatalf("a batch starts at line %d after %d lines", b.firstNo, len(got))
			}
			for _, l := range b.lines {
				got = append(got, string(l))
			}
			return true
		})
		var wb, gb *inputfile.BoundError
		switch {
		case (wantErr == nil) != (err == nil):
			t.Fatalf("Lines: %v; splitLines: %v", wantErr, err)
		case err != nil && (!errors.As(err, &gb) || !errors.As(wantErr, &wb) || gb.Line != wb.Line):
			t.Fatalf("Lines: %v; splitLines: %v: want the same bound at the same line", wantErr, err)
		}
		if len(got) > len(want) || (err == nil && len(got) != len(want)) {
			t.Fatalf("splitLines: %d lines; Lines: %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d: %q, want %q", i+1, got[i], want[i])
			}
		}
	})
}
