package rundir

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// BenchmarkMergeShards merges 4 shards of 25,000 records of 100 chunks each
// (100,000 requests, 10 M chunks) and reports the peak live heap during the
// merge: it stays near the size of a few records per shard whatever the
// run's length, because records are copied a line at a time.
//
//	go test ./rundir -run '^$' -bench MergeShards -benchtime 1x
func BenchmarkMergeShards(b *testing.B) {
	const shards, perShard, chunks = 4, 25_000, 100
	root := b.TempDir()
	var dirs []string
	var size int64
	for i := range shards {
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		meta := RunMeta{ID: fmt.Sprint(i), Scenario: "s", Seed: 1, Shard: i, Shards: shards, StartedAt: benchOrigin.Add(time.Duration(i) * time.Millisecond),
			Ended: benchOrigin.Add(time.Hour), Phases: []PhaseMeta{{Name: "main", Measured: true, End: time.Hour}}}
		mb, _ := json.Marshal(meta)
		if err := os.WriteFile(filepath.Join(dir, RunFile), mb, 0o644); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, RequestsFile))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		r := client.Record{Phase: "main", PromptTokens: 100, OutputTokens: chunks, Chunks: make([]client.Chunk, chunks)}
		for k := range perShard {
			r.ID, r.Index = fmt.Sprintf("r-%d", k*shards+i), k*shards+i
			r.Sent = time.Duration(k) * 10 * time.Millisecond
			for c := range r.Chunks {
				r.Chunks[c] = client.Chunk{At: r.Sent + time.Duration(c+1)*time.Millisecond, Tokens: 1}
			}
			r.End = r.Chunks[chunks-1].At
			if err := enc.Encode(&r); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		size += st.Size()
		f.Close()
		dirs = append(dirs, dir)
	}
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		runtime.GC()
		peak := peakHeap()
		if err := Merge(filepath.Join(b.TempDir(), fmt.Sprint("merged", n)), dirs); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	}
	b.ReportMetric(float64(size)/(1<<20), "input-MB")
}

// peakHeap samples the live heap every 10 ms until the returned
// function is called, which returns the largest sample.
func peakHeap() func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak
	}
}

var benchOrigin = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
