package run

import (
	"context"
	"testing"

	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/workload"
)

// TestImageBank: every image of a plan's requests is made ahead, each URL
// the image's own, and nothing is encoded at send time; past the budget,
// images are encoded when sent, with the same bytes, and counted.
func TestImageBank(t *testing.T) {
	dir := testkit.ExampleFiles(t)
	for _, name := range []string{"vision.yaml", "azure-multimodal.yaml"} {
		t.Run(name, func(t *testing.T) {
			_, plan, err := Load(dir+"/"+name, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := plannedRequests(plan)
			if n == 0 {
				t.Fatalf("%s: want a plan of known size", name)
			}
			var all []workload.Image
			for i := range n {
				for _, m := range plan.Request(i).Messages {
					all = append(all, m.Images...)
				}
			}
			if len(all) == 0 {
				t.Fatal("no images planned")
			}
			bank := prepareImages(context.Background(), plan, imageBankBudget)
			if bank.ahead != len(all) {
				t.Errorf("made %d images ahead, the plan has %d (every image differs)", bank.ahead, len(all))
			}
			for _, im := range all {
				want, err := im.DataURL()
				if err != nil {
					t.Fatal(err)
				}
				if got := bank.dataURL(im); got != want {
					t.Fatalf("image %+v: the bank's URL differs from the image's", im)
				}
			}
			if got := bank.encodedAtSend(); got != 0 {
				t.Errorf("%d images encoded at send time, want 0 within the budget", got)
			}

			small := prepareImages(context.Background(), plan, bank.bytes/2)
			if small.ahead == 0 || small.ahead >= len(all) || small.bytes > bank.bytes/2 {
				t.Errorf("half the budget: %d images ahead (%d bytes) of %d", small.ahead, small.bytes, len(all))
			}
			for _, im := range all {
				want, _ := im.DataURL()
				if got := small.dataURL(im); got != want {
					t.Fatalf("image %+v: URL differs past the budget", im)
				}
			}
			if got, want := small.encodedAtSend(), len(all)-small.ahead; got != want {
				t.Errorf("%d images encoded at send time, want %d", got, want)
			}
		})
	}
}

// TestImageBankNone: a plan without images has no bank, and sends as before.
func TestImageBankNone(t *testing.T) {
	_, plan, err := Load(testkit.ExampleFiles(t)+"/quickstart.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bank := prepareImages(context.Background(), plan, imageBankBudget); bank != nil {
		t.Errorf("a plan without images got a bank of %d images", bank.ahead)
	}
}
