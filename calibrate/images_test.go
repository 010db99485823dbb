package calibrate

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/workload"
)

// TestProbeImages: against the built-in engine (with a chat template, which
// the difference cancels), each image shape costs what the engine's model
// charges; completions, which carry no images, are refused.
func TestProbeImages(t *testing.T) {
	t.Parallel()
	base, model := startSim(t, "vllm", 3, 4)
	shapes := []workload.Image{
		{Width: 512, Height: 512, Format: workload.ImagePNG, Seed: 1},
		{Width: 1024, Height: 768, Format: workload.ImageJPEG, Seed: 2},
		{Width: 70, Height: 70, Format: workload.ImagePNG, Seed: 3},
	}
	got, err := ProbeImages(context.Background(), Config{BaseURL: base, Model: model, Dialect: "vllm"}, shapes)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageObservation{
		{512, 512, "png", sim.ImageTokens(512, 512)},
		{1024, 768, "jpeg", sim.ImageTokens(1024, 768)},
		{70, 70, "png", sim.ImageTokens(70, 70)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("observations (-want +got):\n%s", d)
	}
	_, err = ProbeImages(context.Background(), Config{BaseURL: base, Model: model, Endpoint: EndpointCompletions}, shapes)
	if err == nil || !strings.Contains(err.Error(), "images go in chat requests") {
		t.Errorf("completions: %v", err)
	}
}
