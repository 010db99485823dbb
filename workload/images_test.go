package workload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestImageFiles: a synthetic image is a real PNG or JPEG file of its size,
// the same bytes for the same parameters, other bytes for another seed; its
// data URL is the file in base64.
func TestImageFiles(t *testing.T) {
	t.Parallel()
	for _, tt := range []Image{
		{Width: 512, Height: 512, Format: ImagePNG, Seed: 1},
		{Width: 1024, Height: 768, Format: ImageJPEG, Seed: 2},
		{Width: 17, Height: 3, Format: ImagePNG, Seed: 3}, // sides that are no multiple of a tile
		{Width: 1, Height: 1, Format: ImageJPEG, Seed: 4},
	} {
		b, err := tt.Bytes()
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		img, format, err := image.Decode(bytes.NewReader(b))
		if err != nil || format != tt.Format || img.Bounds().Dx() != tt.Width || img.Bounds().Dy() != tt.Height {
			t.Fatalf("%+v decodes as %s %v (%v)", tt, format, img.Bounds(), err)
		}
		again, _ := tt.Bytes()
		if !bytes.Equal(b, again) {
			t.Errorf("%+v: two encodings differ", tt)
		}
		other := tt
		other.Seed++
		if ob, _ := other.Bytes(); bytes.Equal(b, ob) && tt.Width*tt.Height > 1 {
			t.Errorf("%+v: another seed draws the same image", tt)
		}
		u, err := tt.DataURL()
		prefix := "data:image/" + tt.Format + ";base64,"
		if err != nil || !strings.HasPrefix(u, prefix) {
			t.Fatalf("data URL %.40q, %v", u, err)
		}
		if dec, err := base64.StdEncoding.DecodeString(u[len(prefix):]); err != nil || !bytes.Equal(dec, b) {
			t.Errorf("%+v: the data URL is not the file (%v)", tt, err)
		}
	}
	for _, bad := range []Image{{Width: 0, Height: 5, Format: ImagePNG}, {Width: 5, Height: 5, Format: "gif"}} {
		if _, err := bad.Bytes(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

const visionScenario = `
name: v
seed: 9
engine: {kind: sim}
workload:
  concurrency: 2
  requests: 50
  prompt_tokens: 8
  images:
    sizes: [64x32, 32x64, 48x48]
    count: {dist: uniform, min: 1, max: 3}
    format: jpeg
`

// TestPlanWithImages: every request carries its drawn count of images of
// the scenario's sizes and format on its last message, the same for the same
// seed and index, images differing between requests; the text and its token
// target are those of the dataset alone.
func TestPlanWithImages(t *testing.T) {
	t.Parallel()
	p := plan(t, visionScenario)
	counts, sizes := map[int]int{}, map[[2]int]int{}
	seeds := map[uint64]bool{}
	for i := range 50 {
		r := p.Request(i)
		if d := cmp.Diff(r, p.Request(i), cmp.AllowUnexported(Image{})); d != "" {
			t.Fatalf("request %d differs when asked again:\n%s", i, d)
		}
		last := r.Messages[len(r.Messages)-1]
		if r.PromptTokens != 8 || countWords(last.Content) != 8 {
			t.Errorf("request %d: text target %d, %d words; want 8", i, r.PromptTokens, countWords(last.Content))
		}
		counts[len(last.Images)]++
		for _, im := range last.Images {
			sizes[[2]int{im.Width, im.Height}]++
			if im.Format != ImageJPEG || im.Path != "" || im.SHA256 != "" {
				t.Errorf("request %d: image %+v, want a synthetic jpeg named by its parameters", i, im)
			}
			if seeds[im.Seed] {
				t.Errorf("request %d: seed %d drawn twice", i, im.Seed)
			}
			seeds[im.Seed] = true
		}
	}
	if len(counts) != 3 || counts[0] > 0 || len(sizes) != 3 {
		t.Errorf("counts %v, sizes %v: want 1 to 3 images of each of the three sizes", counts, sizes)
	}
	// Another seed draws other images.
	q := plan(t, strings.Replace(visionScenario, "seed: 9", "seed: 10", 1))
	if q.Request(0).Messages[0].Images[0].Seed == p.Request(0).Messages[0].Images[0].Seed {
		t.Error("seed 10 drew seed 9's first image")
	}
	// The preview names each image by its hash too; the plan JSON holds no bytes.
	prev := p.Preview(5)
	for _, r := range prev {
		for _, im := range r.Messages[0].Images {
			b, _ := im.Bytes()
			if w, _ := im.withHash(); len(im.SHA256) != 64 || w.SHA256 != im.SHA256 || len(b) < 100 {
				t.Errorf("preview image %+v: want its sha256", im)
			}
		}
	}
	js, _ := json.Marshal(prev)
	if bytes.Contains(js, []byte("base64")) || len(js) > 20000 {
		t.Errorf("the preview of 5 requests is %d bytes: the images' bytes must not be in a plan", len(js))
	}
	if !strings.Contains(p.Summary().Dataset, "images: uniform[1,3] per request, each 64x32 or 32x64 or 48x48 jpeg") {
		t.Errorf("dataset description %q", p.Summary().Dataset)
	}
}

// TestAzureMultimodalTrace: the 2025 trace's columns are found by name in
// any order; a request carries the row's images and text of ContextTokens
// less what its images count (at least one word); a zero-length row is
// skipped as in the other Azure traces.
func TestAzureMultimodalTrace(t *testing.T) {
	t.Parallel()
	rows, skipped, err := parseTrace("azure_multimodal", "azure-multimodal.csv", bytes.NewReader(readTestdata(t, "azure-multimodal.csv")))
	if err != nil {
		t.Fatal(err)
	}
	want := []traceRow{
		{at: 0, input: 770, output: 491},
		{at: 5550 * time.Millisecond, input: 949, output: 126, images: 1},
		{at: 7297 * time.Millisecond, input: 1500, output: 28, images: 4},
		{at: 7731 * time.Millisecond, input: 100, output: 10, images: 3},
	}
	if d := cmp.Diff(want, rows, cmp.AllowUnexported(traceRow{})); d != "" || skipped != 1 {
		t.Errorf("rows (-want +got):\n%s\nskipped %d, want 1", d, skipped)
	}
	p := plan(t, `
name: a
engine: {kind: sim}
workload:
  trace: {format: azure_multimodal, path: azure-multimodal.csv, image_tokens: 300}
  images: {sizes: [640x480], format: png}
`)
	for i, w := range []struct{ text, images int }{{770, 0}, {649, 1}, {300, 4}, {1, 3}} {
		r := p.Request(i)
		m := r.Messages[0]
		if r.PromptTokens != w.text || countWords(m.Content) != w.text || len(m.Images) != w.images {
			t.Errorf("request %d: %d text tokens (%d words), %d images; want %d and %d", i, r.PromptTokens, countWords(m.Content), len(m.Images), w.text, w.images)
		}
		for _, im := range m.Images {
			if im.Width != 640 || im.Height != 480 || im.Format != ImagePNG {
				t.Errorf("request %d: image %+v", i, im)
			}
		}
	}
	// Without images set, the trace's images are 512x512 PNGs; the other
	// Azure format has no image column and carries none.
	d := plan(t, "name: a\nengine: {kind: sim}\nworkload:\n  trace: {format: azure_multimodal, path: azure-multimodal.csv}\n")
	if im := d.Request(1).Messages[0].Images; len(im) != 1 || im[0].Width != 512 || im[0].Format != ImagePNG {
		t.Errorf("default trace images %+v", im)
	}
	for _, bad := range []struct{ csv, want string }{
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2024-10-15T12:00:00Z,5,5\n", `header has no "numimages" column`},
		{"TIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15T12:00:00Z,x,5,5\n", `NumImages: want an image count ≥ 0, got "x"`},
		{"TIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15T12:00:00Z,999,5,5\n", "999 images, want at most 256"},
	} {
		if _, _, err := parseTrace("azure_multimodal", "t.csv", strings.NewReader(bad.csv)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.csv, err, bad.want)
		}
	}
}

// TestDatasetImageFiles: a jsonl row's image files (relative to the
// dataset) go on its last message, named by path, size, format and hash and
// sent as the files' own bytes; a file is read once however many rows name
// it; what is not a PNG or JPEG, or missing, is an error at its row.
func TestDatasetImageFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pngBytes, _ := Image{Width: 40, Height: 30, Format: ImagePNG, Seed: 5}.Bytes()
	jpgBytes, _ := Image{Width: 20, Height: 60, Format: ImageJPEG, Seed: 6}.Bytes()
	write("data/img/a.png", pngBytes)
	write("data/img/b.jpg", jpgBytes)
	write("data/img/not.png", []byte("hello"))
	write("data/p.jsonl", []byte(`{"prompt": "what is in it", "images": ["img/a.png", "img/b.jpg"]}
{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "and this"}], "images": ["img/a.png"]}
{"prompt": "no images here"}
`))
	scen := "name: d\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  requests: 3\n  dataset: {type: jsonl, path: data/p.jsonl}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	r0, r1, r2 := p.Request(0), p.Request(1), p.Request(2)
	ims := r0.Messages[0].Images
	if len(ims) != 2 || ims[0].Path != "img/a.png" || ims[0].Width != 40 || ims[0].Height != 30 || ims[0].Format != "png" ||
		ims[1].Format != "jpeg" || ims[1].Width != 20 || len(ims[1].SHA256) != 64 {
		t.Fatalf("row 1's images %+v", ims)
	}
	if b, _ := ims[0].Bytes(); !bytes.Equal(b, pngBytes) {
		t.Error("a dataset image is not sent as its file's bytes")
	}
	if r0.PromptTokens != 4 || len(r1.Messages) != 2 || len(r1.Messages[0].Images) != 0 || len(r1.Messages[1].Images) != 1 ||
		r1.Messages[1].Images[0].SHA256 != ims[0].SHA256 || CountImages(r2.Messages) != 0 {
		t.Errorf("requests %+v / %+v / %+v", r0, r1, r2)
	}
	for _, bad := range []struct{ row, want string }{
		{`{"prompt": "x", "images": ["img/not.png"]}`, "p.jsonl:1: images[0]: img/not.png: not a PNG or JPEG image"},
		{`{"prompt": "x", "images": ["img/none.png"]}`, "p.jsonl:1: images[0]:"},
		{`{"prompt": "x", "images": [""]}`, `images[0]: an empty file name`},
		{`{"messages": [{"role": "user", "content": "x", "images": [{"width": 5}]}]}`, `messages[0]: images go in the row's "images" list`},
		{`{"prompt": "x", "images": "img/a.png"}`, "images: want a list"},
	} {
		write("data/p.jsonl", []byte(bad.row+"\n"))
		if _, err := NewPlan(s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.row, err, bad.want)
		}
	}
}
