package workload

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func addTestdata(f *testing.F, pattern string) {
	names, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err == nil {
			f.Add(data)
		}
	}
}

// sameWhenStreamed checks that a parser reads a file the same however the
// stream's reads are cut (whole, one byte at a time, halves): the data files
// are streamed, and a line, record or error line must not depend on where
// a read ended.
func sameWhenStreamed[T any](t *testing.T, data []byte, parse func(io.Reader) (T, error)) {
	t.Helper()
	want, wantErr := parse(bytes.NewReader(data))
	for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
		got, err := parse(r)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("read in pieces: %v (%v); read whole: %v (%v)", got, err, want, wantErr)
		}
	}
}

func FuzzParseTrace(f *testing.F) {
	addTestdata(f, "*.jsonl")
	addTestdata(f, "*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"mooncake", "azure", "burstgpt"} {
			sameWhenStreamed(t, data, func(r io.Reader) ([]traceRow, error) {
				rows, _, err := parseTrace(format, "f", r)
				return rows, err
			})
			rows, _, err := parseTrace(format, "f", bytes.NewReader(data))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f") {
					t.Fatalf("%s: error does not name the file: %v", format, err)
				}
				continue
			}
			for i, r := range rows {
				if r.input < 1 || r.output < 1 || r.at < 0 || (i > 0 && r.at < rows[i-1].at) || (i == 0 && r.at != 0) {
					t.Fatalf("%s: row %d is %+v", format, i, r)
				}
			}
			ds := &traceRows{seed: 1, rows: rows, blockSize: 3}
			if len(rows[0].hashIDs) < 50 && rows[0].input < 10000 {
				msgs, tokens, _ := ds.request(0)
				if CountTokens(msgs) != tokens {
					t.Fatalf("%s: prompt of %d words for %d tokens", format, CountTokens(msgs), tokens)
				}
			}
		}
	})
}

func FuzzParseShareGPT(f *testing.F) {
	addTestdata(f, "*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, need := range []bool{true, false} {
			sameWhenStreamed(t, data, func(r io.Reader) ([]record, error) {
				list, _, err := parseShareGPT("f", r, need)
				return list, err
			})
			list, _, err := parseShareGPT("f", bytes.NewReader(data), need)
			if err != nil {
				continue
			}
			for _, r := range list {
				if r.tokens < 1 || CountTokens(r.msgs) != r.tokens || (need && r.maxTokens < 1) {
					t.Fatalf("record %+v", r)
				}
			}
		}
	})
}

func FuzzParseJSONL(f *testing.F) {
	addTestdata(f, "prompts*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		sameWhenStreamed(t, data, func(r io.Reader) ([]record, error) { return parseJSONL("f", r) })
		list, err := parseJSONL("f", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range list {
			if r.tokens < 1 || CountTokens(r.msgs) != r.tokens || r.maxTokens < 0 {
				t.Fatalf("record %+v", r)
			}
		}
	})
}

func FuzzParseHistogram(f *testing.F) {
	addTestdata(f, "*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		sameWhenStreamed(t, data, func(r io.Reader) (empiricalLength, error) { return parseHistogram("f", r) })
		h, err := parseHistogram("f", bytes.NewReader(data))
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for range 20 {
			v := h.draw(rng)
			ok := false
			for i := range h.lo {
				ok = ok || (v >= h.lo[i] && v <= h.hi[i])
			}
			if !ok || v < 1 {
				t.Fatalf("drew %d outside every bin", v)
			}
		}
	})
}

// countWords counts what strings.Fields splits, on any bytes.
func FuzzCountWords(f *testing.F) {
	for _, s := range []string{"", " ", "a", " a  b\tc\n", "\u00a0x\u2003y", "\xff \xfe", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countWords(s), len(strings.Fields(s)); got != want {
			t.Fatalf("countWords(%q) = %d, strings.Fields: %d", s, got, want)
		}
	})
}
