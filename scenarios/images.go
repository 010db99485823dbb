package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Image formats of synthetic images.
const (
	ImagePNG  = "png"
	ImageJPEG = "jpeg"
)

// Bounds on images: a side beyond every vision encoder's input, a count
// beyond any chat request (the Azure 2025 multimodal trace's largest are
// tens).
const (
	MaxImageSide        = 8192
	MaxImagesPerRequest = 256
)

// Defaults of Images.
var DefaultImageSize = ImageSize{Width: 512, Height: 512}

const DefaultImageFormat = ImagePNG

// Images adds synthetic images to every request (chat endpoints only):
// real PNG or JPEG files drawn from the seed, sent as data URLs in the last
// user message's image_url parts. With a trace of format azure_multimodal
// the trace gives each request's count.
type Images struct {
	// Sizes are the images' sizes as WIDTHxHEIGHT ("512x512"); each image
	// is one of them, drawn uniformly. Default [512x512].
	Sizes []ImageSize `yaml:"sizes,omitempty"`
	// Count is the images per request: a number or a distribution (as
	// prompt_tokens takes). Default 1; not with a trace (its NumImages).
	Count Length `yaml:"count,omitempty"`
	// Format is png (default) or jpeg.
	Format string `yaml:"format,omitempty"`
}

// ImageSize is an image's width and height in pixels; in YAML "512x512".
type ImageSize struct {
	Width, Height int
}

func (s ImageSize) String() string { return fmt.Sprintf("%dx%d", s.Width, s.Height) }

// ParseImageSize reads WIDTHxHEIGHT ("1024x768"; × is taken too).
func ParseImageSize(text string) (ImageSize, error) {
	text = strings.ReplaceAll(strings.TrimSpace(text), "×", "x")
	w, h, ok := strings.Cut(strings.ToLower(text), "x")
	width, errW := strconv.Atoi(strings.TrimSpace(w))
	height, errH := strconv.Atoi(strings.TrimSpace(h))
	if !ok || errW != nil || errH != nil {
		return ImageSize{}, fmt.Errorf("want WIDTHxHEIGHT in pixels such as 512x512, got %q", text)
	}
	if width < 1 || height < 1 || width > MaxImageSide || height > MaxImageSide {
		return ImageSize{}, fmt.Errorf("want sides from 1 to %d pixels, got %dx%d", MaxImageSide, width, height)
	}
	return ImageSize{Width: width, Height: height}, nil
}

func (s *ImageSize) decodeYAML(d *decoder, n *yaml.Node, path string) {
	var text string
	d.scalar(n, path, reflect.ValueOf(&text).Elem())
	v, err := ParseImageSize(text)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return
	}
	*s = v
}

func (s ImageSize) encodeYAML(*encoder, string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s.String()}
}

func (im *Images) fill(d *decoder, path string, trace bool) {
	if len(im.Sizes) == 0 {
		im.Sizes = []ImageSize{DefaultImageSize}
	}
	if im.Format == "" {
		im.Format = DefaultImageFormat
	}
	if !trace && !d.has(joinPath(path, "count")) {
		im.Count = Length{Dist: DistFixed, Value: 1}
	}
}

// validate checks the images of workload w (at path "workload.images").
func (im *Images) validate(d *decoder, path string, w *Workload, endpoint string, src source) {
	at := func(f string) string { return joinPath(path, f) }
	if endpoint == EndpointCompletions {
		d.failf(path, "not with endpoint %s: images go in chat messages", endpoint)
	}
	switch {
	case w.Trace != nil && w.Trace.Format != TraceAzureMultimodal:
		d.failf(path, "not with trace format %s: only azure_multimodal gives images per request", w.Trace.Format)
	case w.Trace != nil:
		notAllowed(d, path, []string{"count"}, "not with trace: its NumImages column gives each request's count")
	case w.Dataset.Type != DatasetSynthetic && w.Dataset.Type != DatasetSharedPrefix:
		d.failf(path, "not with dataset %s: synthetic images go with a synthetic or shared_prefix dataset (a jsonl row names its own image files)", w.Dataset.Type)
	}
	switch im.Format {
	case ImagePNG, ImageJPEG:
	default:
		d.failf(at("format"), "unknown image format %q: png or jpeg", im.Format)
	}
	if w.Trace == nil {
		im.Count.validate(d, at("count"), src)
		if im.Count.Dist == DistFixed || im.Count.Dist == DistUniform {
			if hi := max(im.Count.Value, im.Count.Max); hi > MaxImagesPerRequest {
				d.failf(at("count"), "want at most %d images per request, got %d", MaxImagesPerRequest, hi)
			}
		}
	}
}

func (w *Workload) validateImages(d *decoder, path, endpoint string, src source) {
	if w.Images != nil {
		w.Images.validate(d, joinPath(path, "images"), w, endpoint, src)
	}
}

func (t *Trace) validateImageTokens(d *decoder, path string) {
	if !d.has(path) {
		return
	}
	if t.Format != TraceAzureMultimodal || t.ImageTokens < 0 {
		d.failf(path, "only for format azure_multimodal, and at least 0")
		return
	}
	checkBound(d, path, float64(t.ImageTokens), MaxLengthTokens, "tokens an image")
}
