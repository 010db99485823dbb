package client

import (
	"encoding/json"
	"testing"
)

// BenchmarkRecord compares the two record formats on a 200-chunk record:
// bytes per line, and the CPU to write and to read one.
//
//	go test -run '^$' -bench Record -benchmem ./client/
func BenchmarkRecord(b *testing.B) {
	rec := sampleRecord(200, 1)
	v1 := v1Line(b, rec)
	v2 := rec.AppendJSON(nil)

	b.Run("encode/v1-encoding-json", func(b *testing.B) {
		defer b.ReportMetric(float64(len(v1)), "bytes/record") // after b.Loop, which clears metrics
		for b.Loop() {
			if _, err := json.Marshal((*recordFields)(&rec)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/v2-json.Marshal", func(b *testing.B) {
		defer b.ReportMetric(float64(len(v2)), "bytes/record")
		for b.Loop() {
			if _, err := json.Marshal(&rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/v2-AppendJSON", func(b *testing.B) {
		defer b.ReportMetric(float64(len(v2)), "bytes/record")
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf = rec.AppendJSON(buf[:0])
		}
	})
	decode := func(name string, line []byte, fn func(r *Record) error) {
		b.Run(name, func(b *testing.B) {
			defer b.ReportMetric(float64(len(line)), "bytes/record")
			b.SetBytes(int64(len(line)))
			var r Record
			cpu0 := threadCPU()
			for b.Loop() {
				if err := fn(&r); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time of this thread: on a shared machine, wall time per op
			// also counts the time other processes held the core.
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	decode("decode/v1-encoding-json", v1, func(r *Record) error {
		*r = Record{}
		return json.Unmarshal(v1, (*recordFields)(r))
	})
	decode("decode/v1-DecodeRecord", v1, func(r *Record) error { return DecodeRecord(v1, r) })
	decode("decode/v2-json.Unmarshal", v2, func(r *Record) error { return json.Unmarshal(v2, r) })
	decode("decode/v2-DecodeRecord-fresh", v2, func(r *Record) error { r.Chunks = nil; return DecodeRecord(v2, r) })
	decode("decode/v2-DecodeRecord-reused", v2, func(r *Record) error { return DecodeRecord(v2, r) })
	// The floor any reader of a v2 line pays: one pass over its bytes that
	// parses the digits (a running sum of the numbers, no JSON).
	decode("decode/v2-floor-digits", v2, func(r *Record) error {
		var n, sum int64
		for _, c := range v2 {
			if d := c - '0'; d <= 9 {
				n = n*10 + int64(d)
			} else {
				sum += n
				n = 0
			}
		}
		r.Index = int(sum)
		return nil
	})
}
