package run

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestImageExamples runs scenarios/vision.yaml and azure-multimodal.yaml
// against the built-in engine and holds them to its ground truth: every
// request carried the images its plan names, the engine charged each as its
// model says (sim.ImageTokens of the planned size), the client's prompt
// tokens are the engine's (text target + image tokens, exactly), the
// summary's image tokens are the truth's sum and the text alone shows no
// prompt error, and TTFT agrees with the engine's, both measured from the
// body's last byte, within p50 1 ms and p99 15 ms (chat's bound is 0.5 and
// 2 ms: see the check; a miss on a busy machine is run again, quiet.Retry).
func TestImageExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two examples against the built-in engine")
	}
	t.Parallel()
	dir := testkit.ExampleFiles(t)
	for _, name := range []string{"vision.yaml", "azure-multimodal.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, name)
			_, plan, err := Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			quiet.Retry{Within: 45 * time.Second, Children: true}.Run(t, func(int) []string {
				quiet.Busy(t)
				cio, _, stderr := testIO(nil)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				run, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
				if err != nil {
					t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
				}
				records := readJSONL[client.Record](t, filepath.Join(run, rundir.RequestsFile))
				truths := readJSONL[sim.RequestTruth](t, filepath.Join(run, rundir.TruthFile))
				sum, err := report.Build(run)
				if err != nil {
					t.Fatal(err)
				}
				byID := map[string]sim.RequestTruth{}
				for _, tr := range truths {
					byID[tr.HeaderID] = tr
				}
				images, imageTokens := 0, 0
				var dTTFT []time.Duration
				for _, r := range records {
					tr, ok := byID[r.ID]
					if !r.OK() || !ok {
						t.Fatalf("request %s: %s %s (truth found: %v)", r.ID, r.ErrorClass, r.Error, ok)
					}
					want := 0
					planned := plan.Request(r.Index)
					for _, m := range planned.Messages {
						for _, im := range m.Images {
							want += sim.ImageTokens(im.Width, im.Height)
						}
					}
					n := 0
					for _, m := range planned.Messages {
						n += len(m.Images)
					}
					if r.Images != n || tr.Images != n || tr.ImageTokens != want {
						t.Errorf("request %s: %d images sent, %d seen, %d image tokens charged; planned %d images of %d tokens",
							r.ID, r.Images, tr.Images, tr.ImageTokens, n, want)
					}
					if r.PromptTokens != tr.PromptTokens || r.PromptTokens != r.TargetPromptTokens+tr.ImageTokens {
						t.Errorf("request %s: client counts %d prompt tokens, engine %d, text target %d + image tokens %d",
							r.ID, r.PromptTokens, tr.PromptTokens, r.TargetPromptTokens, tr.ImageTokens)
					}
					images += tr.Images
					imageTokens += tr.ImageTokens
					ttft, _ := r.TTFT()
					// Both from the body's last byte: the client's TTFT starts
					// when it wrote it, the engine's read of it ends at
					// BodyRead (megabytes of images take milliseconds to
					// move, which the engine's Arrival would count and the
					// client's TTFT does not).
					dTTFT = append(dTTFT, ttft-(tr.FirstTokenFlushed-tr.BodyRead))
				}
				if images == 0 {
					t.Fatal("no request carried an image")
				}
				im := sum.Client.Tokens.Images
				if im == nil || im.Images != images || im.Tokens != imageTokens {
					t.Errorf("summary's images %+v; truth: %d images, %d tokens", im, images, imageTokens)
				}
				if e := sum.Client.Tokens.PromptError; e != nil && (e.Min != 0 || e.Max != 0) {
					t.Errorf("the text of requests without images missed the engine's count: %+v", e)
				}
				// |·|, as TestRunAgainstGroundTruth: either side may be first.
				p50, p99 := quantileAbs(dTTFT, 0.5), quantileAbs(dTTFT, 0.99)
				var misses []string
				// Not yet chat's bound (p50 0.5 ms, p99 2 ms): on a quiet
				// 2-core machine image requests agree to p50 0.2–0.55 ms but
				// p99 3–9 ms, either side late by up to 7 ms, because the
				// client draws and encodes each request's images and
				// marshals megabytes of JSON on its own cores while it
				// timestamps other streams (encoding them ahead of their
				// send time is not built yet: decision 1500). These bounds
				// hold what is measured now and still catch a systematic
				// error (an image's encoding or upload counted in TTFT).
				if p50 > time.Millisecond || p99 > 15*time.Millisecond {
					misses = append(misses, fmt.Sprintf("|client TTFT − engine TTFT|: p50 %v, p99 %v; want within 1 ms and 15 ms (signed %s)", p50, p99, signedSpread(dTTFT)))
				}
				return misses
			})
		})
	}
}

// signedSpread is the smallest and largest of ds: which side was late.
func signedSpread(ds []time.Duration) string {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	return fmt.Sprintf("from %v to %v", lo, hi)
}
