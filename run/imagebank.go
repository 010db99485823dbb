package run

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/llmbench-org/llmbench/workload"
)

// Images are encoded ahead of the load (decision 1503): drawing and
// encoding a PNG takes milliseconds of CPU, and done by the sender just
// before its request goes out it ran on the cores that timestamp every
// other stream — on 2 cores a client late by up to 21 ms on image runs'
// TTFT p99. The bank holds each image's data URL, made on all cores before
// the measured phase, up to a memory budget; an image past it is encoded
// when sent, as before, and counted.

// imageBankBudget bounds the data URLs made ahead (bytes of base64): a
// 512×512 synthetic PNG is about 8.8 kB, so 256 MiB holds some 30,000.
const imageBankBudget = 256 << 20

// imageBankScan bounds the requests looked at ahead when the plan's count is
// not known (phases that run for a time): the first ones are what a run
// sends first, and the rest are encoded when sent.
const imageBankScan = 100_000

// imageKey names one image: two images with the same key have the same bytes.
type imageKey struct {
	width, height int
	format        string
	seed          uint64
	path, sha256  string
}

func keyOf(im workload.Image) imageKey {
	return imageKey{im.Width, im.Height, im.Format, im.Seed, im.Path, im.SHA256}
}

// imageBank is the data URLs made ahead; nil means none (a plan without
// images), and every lookup then encodes at once.
type imageBank struct {
	urls   map[imageKey]string // read-only once built
	ahead  int                 // images made ahead
	bytes  int64               // their data URLs' size
	atSend atomic.Int64        // images encoded when their request was sent
}

// prepareImages makes the data URL of every image of the plan's first
// requests (all of them when the plan says how many it sends) on every core,
// until budget bytes are made. It returns nil for a plan without images.
func prepareImages(ctx context.Context, plan *workload.Plan, budget int64) *imageBank {
	if len(plan.ImageShapes()) == 0 {
		return nil
	}
	n := plannedRequests(plan)
	if n <= 0 {
		n = imageBankScan
	}
	bank := &imageBank{urls: map[imageKey]string{}}
	work := make(chan workload.Image)
	var (
		mu   sync.Mutex
		full atomic.Bool
		wg   sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for im := range work {
				u, err := im.DataURL()
				if err != nil || full.Load() {
					continue // encoded when sent: the record shows any error
				}
				mu.Lock()
				if bank.bytes+int64(len(u)) > budget {
					full.Store(true)
				} else {
					bank.urls[keyOf(im)] = u
					bank.bytes += int64(len(u))
					bank.ahead++
				}
				mu.Unlock()
			}
		})
	}
	seen := map[imageKey]bool{}
scan:
	for i := 0; i < n && !full.Load() && ctx.Err() == nil; i++ {
		for _, m := range plan.Request(i).Messages {
			for _, im := range m.Images {
				if k := keyOf(im); !seen[k] {
					seen[k] = true
					select {
					case work <- im:
					case <-ctx.Done():
						break scan
					}
				}
			}
		}
	}
	close(work)
	wg.Wait()
	return bank
}

// dataURL is im's data URL: made ahead, or made now and counted. A
// validated scenario's images always encode; were one not to, its empty URL
// makes the engine refuse the request, and the record shows it.
func (b *imageBank) dataURL(im workload.Image) string {
	if b != nil {
		if u, ok := b.urls[keyOf(im)]; ok {
			return u
		}
		b.atSend.Add(1)
	}
	u, _ := im.DataURL()
	return u
}

// encodedAtSend is how many images were encoded as their request went out.
func (b *imageBank) encodedAtSend() int {
	if b == nil {
		return 0
	}
	return int(b.atSend.Load())
}
