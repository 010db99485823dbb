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
	"github.com/llmbench-org/llmbench/internal/race"
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
// body's last byte, within chat's bound (TestRunAgainstGroundTruth: p50
// 0.5 ms, p99 2 ms; a miss on a busy machine is run again, and up to two
// on a quiet one, quiet.Retry).
//
// Not parallel, neither the test nor its two examples: a bound on the
// client's timestamps holds only while nothing else runs in this process
// (quiet.Retry sees other processes, not this one's other tests; run in
// parallel with them it missed by 21 ms on a quiet CI machine).
func TestImageExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two examples against the built-in engine")
	}
	dir := testkit.ExampleFiles(t)
	for _, name := range []string{"vision.yaml", "azure-multimodal.yaml"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			_, plan, err := Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			quiet.Retry{Within: 45 * time.Second, Children: true, QuietMisses: 2}.Run(t, func(attempt int) []string {
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
				// Chat's bound: the images are encoded ahead of the load
				// (decision 1503), so nothing but the stream is on the
				// client's cores as it timestamps. Before, each request's
				// images were drawn and encoded as it went out, and p99 was
				// 3–9 ms (21 ms beside other tests).
				got := fmt.Sprintf("|client TTFT − engine TTFT|: p50 %v, p99 %v (signed %s)", p50, p99, signedSpread(dTTFT))
				t.Logf("attempt %d: %s", attempt, got)
				if race.Enabled {
					return nil // the race detector's own delays: the bounds are not checked
				}
				if p50 > 500*time.Microsecond || p99 > 2*time.Millisecond {
					misses = append(misses, got+"; want within 0.5 ms and 2 ms")
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
