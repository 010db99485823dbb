package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImagesSchema: the images of a workload, their defaults, and each
// mistake at its place.
func TestImagesSchema(t *testing.T) {
	t.Parallel()
	s, err := Parse("testdata/x.yaml", []byte(head+"workload:\n  concurrency: 1\n  duration: 1s\n  images: {sizes: [1024×768, 64X32]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Images{Sizes: []ImageSize{{1024, 768}, {64, 32}}, Count: Length{Dist: DistFixed, Value: 1}, Format: ImagePNG}
	if d := cmp.Diff(want, s.Workload.Images); d != "" {
		t.Errorf("images (-want +got):\n%s", d)
	}
	// The resolved scenario writes them back as it read them.
	y, err := s.Resolved()
	if err != nil || !strings.Contains(string(y), "sizes: [1024x768, 64x32]") || !strings.Contains(string(y), "count: 1") {
		t.Errorf("resolved scenario (%v):\n%s", err, y)
	}
	back, err := Parse("testdata/x.yaml", y)
	if err != nil || !cmp.Equal(back.Workload.Images, s.Workload.Images) {
		t.Errorf("the resolved scenario reads back as %+v (%v)", back.Workload.Images, err)
	}
	s, err = Parse("testdata/x.yaml", []byte(head+"workload:\n  trace: {format: azure_multimodal, path: azure-mm.csv, image_tokens: 258}\n"))
	if err != nil || s.Workload.Images != nil || s.Workload.Trace.ImageTokens != 258 {
		t.Fatalf("a multimodal trace: %v, %+v", err, s.Workload.Trace)
	}

	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad size", head + "workload: {concurrency: 1, duration: 1s, images: {sizes: [512, 0x9, 9000x10]}}\n", []string{
			`f.yaml:3:59: workload.images.sizes[0]: want WIDTHxHEIGHT in pixels such as 512x512, got "512"`,
			`f.yaml:3:64: workload.images.sizes[1]: want sides from 1 to 8192 pixels, got 0x9`,
			`f.yaml:3:69: workload.images.sizes[2]: want sides from 1 to 8192 pixels, got 9000x10`}},
		{"format and count", head + "workload: {concurrency: 1, duration: 1s, images: {format: gif, count: 300}}\n", []string{
			`f.yaml:3:59: workload.images.format: unknown image format "gif": png or jpeg`,
			`f.yaml:3:71: workload.images.count: want at most 256 images per request, got 300`}},
		{"count of none", head + "workload: {concurrency: 1, duration: 1s, images: {count: 0}}\n", []string{
			`f.yaml:3:58: workload.images.count: want a length of at least 1, got 0`}},
		{"completions", head + "request: {endpoint: completions}\nworkload: {concurrency: 1, duration: 1s, images: {}}\n", []string{
			`f.yaml:4:50: workload.images: not with endpoint completions: images go in chat messages`}},
		{"another trace", head + "workload:\n  trace: {format: azure, path: azure-mm.csv, image_tokens: 5}\n  images: {}\n", []string{
			`f.yaml:4:60: workload.trace.image_tokens: only for format azure_multimodal, and at least 0`,
			`f.yaml:5:11: workload.images: not with trace format azure: only azure_multimodal gives images per request`}},
		{"count with a trace", head + "workload:\n  trace: {format: azure_multimodal, path: azure-mm.csv, image_tokens: -1}\n  images: {count: 2}\n", []string{
			`f.yaml:4:71: workload.trace.image_tokens: only for format azure_multimodal, and at least 0`,
			`f.yaml:5:19: workload.images.count: not with trace: its NumImages column gives each request's count`}},
		{"a file dataset", head + "workload: {concurrency: 1, duration: 1s, dataset: {type: multi_turn, turns: 2}, images: {}}\n", []string{
			`f.yaml:3:89: workload.images: not with dataset multi_turn: synthetic images go with a synthetic or shared_prefix dataset (a jsonl row names its own image files)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("testdata/f.yaml", []byte(tt.yaml))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error = %v, want an ErrorList", err)
			}
			got := strings.Split(strings.ReplaceAll(err.Error(), "testdata/", ""), "\n")
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}
