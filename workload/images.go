package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"

	"github.com/llmbench-org/llmbench/scenarios"
)

// Image is one image of a chat message. A plan names it by what makes it,
// not by its bytes (docs/decisions/1500-images-in-a-plan.md): a synthetic
// image by its generator's parameters (size, format, seed), a dataset's by
// its file's path and the hash of its bytes. So `llmbench plan` stays small
// and byte-identical, and the bytes are made when the request is sent.
type Image struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Format string `json:"format"`         // png or jpeg
	Seed   uint64 `json:"seed,omitempty"` // a synthetic image: the generator's seed
	Path   string `json:"path,omitempty"` // a dataset's image: its file, as the dataset names it
	// SHA256 is the hash of the encoded bytes: a dataset's image has it
	// from the plan on; a synthetic one in a plan's preview (Plan.Preview).
	SHA256 string `json:"sha256,omitempty"`

	data []byte // a dataset's image: the file's bytes, read with the plan
}

// Image formats.
const (
	ImagePNG  = scenarios.ImagePNG
	ImageJPEG = scenarios.ImageJPEG
)

// ImageGenerator names the synthetic image generator; a change to what it
// draws is a new name, so two plans' images are the same only under the same one.
const ImageGenerator = "tiles-v1"

// imageTile is the side in pixels of the generator's square tiles of one colour.
const imageTile = 16

// jpegQuality is the quality synthetic JPEG images are encoded at.
const jpegQuality = 90

// Bytes returns the image's encoded file: a dataset's bytes as read, or a
// synthetic image drawn and encoded now (the same bytes for the same
// parameters under one Go release: the encoders are the standard library's).
func (im Image) Bytes() ([]byte, error) {
	if im.data != nil {
		return im.data, nil
	}
	if im.Width < 1 || im.Height < 1 || im.Width > scenarios.MaxImageSide || im.Height > scenarios.MaxImageSide {
		return nil, fmt.Errorf("image %dx%d: want sides from 1 to %d pixels", im.Width, im.Height, scenarios.MaxImageSide)
	}
	img := drawTiles(im.Width, im.Height, im.Seed, im.Format)
	var b bytes.Buffer
	switch im.Format {
	case ImagePNG:
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&b, img); err != nil {
			return nil, err
		}
	case ImageJPEG:
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: jpegQuality}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("image format %q: want png or jpeg", im.Format)
	}
	return b.Bytes(), nil
}

// DataURL is the image as the chat API's image_url part carries it:
// data:image/png;base64,… (or image/jpeg).
func (im Image) DataURL() (string, error) {
	b, err := im.Bytes()
	if err != nil {
		return "", err
	}
	prefix := "data:" + mimeType(im.Format) + ";base64,"
	out := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(b)))
	copy(out, prefix)
	base64.StdEncoding.Encode(out[len(prefix):], b)
	return string(out), nil
}

func mimeType(format string) string {
	if format == ImageJPEG {
		return "image/jpeg"
	}
	return "image/png"
}

// drawTiles draws a width×height picture of imageTile-pixel tiles, each of
// a colour drawn from seed: cheap to draw, a real picture to decode, and
// different for every seed (engines cache images by their bytes). A PNG is
// paletted (one byte a pixel, and the encoder tries no filters: several
// times faster to encode than RGB); a JPEG is RGBA, the encoder's fast path.
func drawTiles(width, height int, seed uint64, format string) image.Image {
	rng := rand.New(rand.NewPCG(seed, mix(seed)))
	palette := make(color.Palette, 256)
	for i := range palette {
		v := rng.Uint32()
		palette[i] = color.RGBA{R: uint8(v), G: uint8(v >> 8), B: uint8(v >> 16), A: 255}
	}
	cols := (width + imageTile - 1) / imageTile
	tiles := make([]uint8, cols)
	rect := image.Rect(0, 0, width, height)
	var pal *image.Paletted
	var rgba *image.RGBA
	if format == ImageJPEG {
		rgba = image.NewRGBA(rect)
	} else {
		pal = image.NewPaletted(rect, palette)
	}
	for ty := 0; ty < height; ty += imageTile {
		for i := range tiles {
			tiles[i] = uint8(rng.Uint32())
		}
		// Draw the tiles' first line, then copy it down the tile's rows.
		var first []uint8
		if pal != nil {
			first = pal.Pix[ty*pal.Stride : ty*pal.Stride+width]
			for x := range width {
				first[x] = tiles[x/imageTile]
			}
		} else {
			first = rgba.Pix[ty*rgba.Stride : ty*rgba.Stride+4*width]
			for x := range width {
				c := palette[tiles[x/imageTile]].(color.RGBA)
				first[4*x], first[4*x+1], first[4*x+2], first[4*x+3] = c.R, c.G, c.B, c.A
			}
		}
		stride := len(first)
		if pal != nil {
			for y := ty + 1; y < min(ty+imageTile, height); y++ {
				copy(pal.Pix[y*pal.Stride:y*pal.Stride+stride], first)
			}
		} else {
			for y := ty + 1; y < min(ty+imageTile, height); y++ {
				copy(rgba.Pix[y*rgba.Stride:y*rgba.Stride+stride], first)
			}
		}
	}
	if pal != nil {
		return pal
	}
	return rgba
}

// withHash returns im with SHA256 set from its bytes.
func (im Image) withHash() (Image, error) {
	if im.SHA256 != "" {
		return im, nil
	}
	b, err := im.Bytes()
	if err != nil {
		return im, err
	}
	sum := sha256.Sum256(b)
	im.SHA256 = hex.EncodeToString(sum[:])
	return im, nil
}

// streamImage keys the random streams of synthetic images (their count,
// sizes and seeds), apart from every stream of rng.go.
const streamImage uint64 = 0x696d61676573 // "images"

// imageSpec is a scenario's synthetic images: how many a request carries
// (count; nil when a trace gives each request's), each one's size drawn
// from sizes, all of one format.
type imageSpec struct {
	seed   int64
	sizes  []scenarios.ImageSize
	count  lengthDist
	format string
}

func newImageSpec(seed int64, im *scenarios.Images, open func(string) (io.ReadCloser, error)) (*imageSpec, error) {
	if im == nil {
		return nil, nil
	}
	spec := &imageSpec{seed: seed, sizes: im.Sizes, format: im.Format}
	if im.Count.Dist != "" {
		d, err := newLengthDist(im.Count, open)
		if err != nil {
			return nil, fmt.Errorf("images.count: %w", err)
		}
		spec.count = d
	}
	return spec, nil
}

// images returns request i's images: n of them, or as many as the count
// draws when n < 0.
func (s *imageSpec) images(i, n int) []Image {
	rng := newRand(s.seed, streamImage, uint64(i))
	if n < 0 {
		n = min(s.count.draw(rng), scenarios.MaxImagesPerRequest)
	}
	if n == 0 {
		return nil
	}
	out := make([]Image, n)
	for k := range out {
		size := s.sizes[rng.IntN(len(s.sizes))]
		out[k] = Image{Width: size.Width, Height: size.Height, Format: s.format, Seed: rng.Uint64()}
	}
	return out
}

// describe says what images a request carries, for the plan's summary.
func (s *imageSpec) describe(count string) string {
	sizes := ""
	for k, sz := range s.sizes {
		if k > 0 {
			sizes += " or "
		}
		sizes += sz.String()
	}
	return fmt.Sprintf("images: %s per request, each %s %s (generator %s)", count, sizes, s.format, ImageGenerator)
}

// withImages adds synthetic images to the last message of another
// dataset's requests.
type withImages struct {
	dataset
	spec *imageSpec
}

func (w withImages) request(i int) ([]Message, int, int) {
	msgs, prompt, maxTokens := w.dataset.request(i)
	if ims := w.spec.images(i, -1); len(ims) > 0 {
		msgs = cloneMessages(msgs)
		last := &msgs[len(msgs)-1]
		last.Images = append(append([]Image(nil), last.Images...), ims...)
	}
	return msgs, prompt, maxTokens
}

// CountImages is the number of images of the messages.
func CountImages(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Images)
	}
	return n
}

// traceImages are the images of a trace replay whose rows count them
// (azure_multimodal): spec draws each one's size; tokensEach is what one
// image counts in the row's input (ContextTokens), the rest being text.
type traceImages struct {
	spec       *imageSpec // nil: the trace's requests carry no images
	tokensEach int
}

// textTokens is the text part of row's input: at least one word.
func (ti traceImages) textTokens(row traceRow) int {
	return max(row.input-row.images*ti.tokensEach, 1)
}

func (ti traceImages) of(i int, row traceRow) []Image {
	if ti.spec == nil || row.images == 0 {
		return nil
	}
	return ti.spec.images(i, row.images)
}

// addImages wraps the plan's dataset in the scenario's synthetic images.
func (p *Plan) addImages(s scenarios.Scenario) error {
	spec, err := newImageSpec(s.Seed, s.Workload.Images, s.Open)
	if err != nil || spec == nil {
		return err
	}
	p.data = withImages{dataset: p.data, spec: spec}
	p.images = spec.shapes()
	p.dataDesc += "; " + spec.describe(describeLength(s.Workload.Images.Count))
	return nil
}

// newTraceImages is a trace's images: those of an azure_multimodal trace,
// of the scenario's sizes (512x512 png when it sets none).
func newTraceImages(s scenarios.Scenario) (traceImages, error) {
	t := s.Workload.Trace
	if t.Format != scenarios.TraceAzureMultimodal {
		return traceImages{}, nil
	}
	im := s.Workload.Images
	if im == nil {
		im = &scenarios.Images{Sizes: []scenarios.ImageSize{scenarios.DefaultImageSize}, Format: scenarios.DefaultImageFormat}
	}
	spec, err := newImageSpec(s.Seed, im, s.Open)
	return traceImages{spec: spec, tokensEach: t.ImageTokens}, err
}

func (ti traceImages) describe() string {
	if ti.spec == nil {
		return ""
	}
	return fmt.Sprintf("; %s, each counted as %d tokens of the trace's", ti.spec.describe("the trace's"), ti.tokensEach)
}

// shapes is one image of each of the spec's sizes (nil spec: none).
func (s *imageSpec) shapes() []Image {
	if s == nil {
		return nil
	}
	out := make([]Image, len(s.sizes))
	for k, sz := range s.sizes {
		out[k] = Image{Width: sz.Width, Height: sz.Height, Format: s.format, Seed: subSeed(s.seed, streamImage, ^uint64(k))}
	}
	return out
}

// ImageShapes returns one image of each size and format the plan's
// requests carry (none without images): what calibration shows the engine
// to learn what it charges an image.
func (p *Plan) ImageShapes() []Image { return append([]Image(nil), p.images...) }
