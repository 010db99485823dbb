package sim

import (
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg" // DecodeConfig reads JPEG headers
	_ "image/png"  // and PNG ones
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// Images in chat messages (docs/decisions/1501-sim-image-tokens.md). The
// engine takes image_url parts whose URL is a data: URL of a PNG or JPEG
// file, reads the image's size from its header, and charges it as
// Qwen2-VL's processor does (transformers' Qwen2VLImageProcessor, which
// vLLM runs): the image is resized so both sides are multiples of 28 (14-
// pixel patches, merged 2×2) and its area lies within [56×56, 28×28×1280]
// pixels, and each 28×28 square is one token; the chat template's
// <|vision_start|> and <|vision_end|> add two more. Image tokens are
// prompt tokens like any other: prefilled at the same cost per token
// (a vision encoder's own time is not modelled), cached by the prefix
// cache when the same image bytes come at the same place.

// The Qwen2-VL processor's constants (transformers' smart_resize defaults).
const (
	imageFactor     = 28 // patch 14 × merge 2
	imageMinPixels  = 56 * 56
	imageMaxPixels  = 14 * 14 * 4 * 1280
	imageMaxRatio   = 200 // the processor refuses a longer side over 200 × the shorter
	imageExtraTurns = 2   // <|vision_start|> and <|vision_end|>
)

// ImageTokens is the prompt tokens the built-in engine charges for an
// image of width×height pixels.
func ImageTokens(width, height int) int {
	h, w := smartResize(height, width)
	return (h/imageFactor)*(w/imageFactor) + imageExtraTurns
}

// smartResize is Qwen2-VL's: round each side to a multiple of the factor
// (Python's round, half to even), then scale both to bring the area within
// the pixel bounds.
func smartResize(height, width int) (int, int) {
	f := float64(imageFactor)
	hb := int(math.RoundToEven(float64(height)/f)) * imageFactor
	wb := int(math.RoundToEven(float64(width)/f)) * imageFactor
	switch {
	case hb*wb > imageMaxPixels:
		beta := math.Sqrt(float64(height*width) / imageMaxPixels)
		hb = max(imageFactor, int(math.Floor(float64(height)/beta/f))*imageFactor)
		wb = max(imageFactor, int(math.Floor(float64(width)/beta/f))*imageFactor)
	case hb*wb < imageMinPixels:
		beta := math.Sqrt(imageMinPixels / float64(height*width))
		hb = int(math.Ceil(float64(height)*beta/f)) * imageFactor
		wb = int(math.Ceil(float64(width)*beta/f)) * imageFactor
	}
	return hb, wb
}

// imageUse is what a request's images cost.
type imageUse struct {
	images, tokens int
}

// contentParts reads a list of content parts: the text parts joined with
// a space, and the image_url parts' URLs in order.
func contentParts(raw json.RawMessage) (string, []string, error) {
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, badf("invalid message content parts: %v", err)
	}
	var b strings.Builder
	var urls []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Text)
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return "", nil, badf("an image_url part needs image_url.url")
			}
			urls = append(urls, p.ImageURL.URL)
		default:
			return "", nil, badf("content part type %q is not supported (text and image_url only)", p.Type)
		}
	}
	return b.String(), urls, nil
}

// messageContent is a message's text and its images' URLs.
func messageContent(raw json.RawMessage) (string, []string, error) {
	if r := trimSpace(raw); len(r) > 0 && r[0] == '[' {
		return contentParts(r)
	}
	text, err := messageText(raw)
	return text, nil, err
}

func trimSpace(raw json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.TrimSpace(string(raw)))
}

// imageTokens charges the images and feeds their tokens to h (nil = count
// only): each image's tokens are ids drawn from a hash of its URL, so the
// same image bytes are the same tokens for the prefix cache.
func imageTokens(urls []string, h *batch.Hasher) (int, error) {
	total := 0
	for _, u := range urls {
		w, ht, err := imageSize(u)
		if err != nil {
			return 0, err
		}
		n := ImageTokens(w, ht)
		if h != nil {
			base := batch.HashString(u)
			for k := range n {
				h.Add(batch.Mix64(base + uint64(k)))
			}
		}
		total += n
	}
	return total, nil
}

// imageSize reads the width and height of a data: URL's PNG or JPEG image
// from its header, decoding only as much base64 as the header takes.
func imageSize(url string) (int, int, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return 0, 0, badf("image_url: the built-in engine takes data: URLs only (data:image/png;base64,…), not %.40q", url)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, badf("image_url: want a base64 data: URL (data:image/png;base64,…)")
	}
	cfg, format, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil {
		return 0, 0, badf("image_url: not a PNG or JPEG image: %v", err)
	}
	if format != "png" && format != "jpeg" {
		return 0, 0, badf("image_url: a %s image, want PNG or JPEG", format)
	}
	if max(cfg.Width, cfg.Height) > imageMaxRatio*min(cfg.Width, cfg.Height) {
		return 0, 0, badf("image_url: the image is %dx%d: its aspect ratio must be under %d", cfg.Width, cfg.Height, imageMaxRatio)
	}
	return cfg.Width, cfg.Height, nil
}
