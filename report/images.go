package report

import (
	"fmt"

	"github.com/llmbench-org/llmbench/client"
)

// ImageTokens is what the engine charged for the images of the successful
// requests that carried any. An engine's usage has no count of image tokens
// of its own (prompt_tokens holds text and images), so they are measured as
// the engine's prompt tokens less the text's, the plan's target for it:
// exact where the text is counted exactly (the prompt calibration of the
// requests without images says how well it is).
type ImageTokens struct {
	Requests int `json:"requests"` // successful requests with images
	Images   int `json:"images"`   // images they carried
	// Prompt is the engine's prompt tokens of those requests, TextTarget
	// the plan's text tokens of the same; Tokens = Prompt − TextTarget.
	Prompt     int     `json:"prompt"`
	TextTarget int     `json:"text_target"`
	Tokens     int     `json:"tokens"`
	PerImage   float64 `json:"per_image"` // Tokens ÷ Images
}

// imageTally gathers ImageTokens over the records.
type imageTally struct{ t ImageTokens }

func (g *imageTally) add(r *client.Record) {
	if r.Images == 0 || r.PromptTokens <= 0 {
		return
	}
	g.t.Requests++
	g.t.Images += r.Images
	g.t.Prompt += r.PromptTokens
	g.t.TextTarget += r.TargetPromptTokens
}

func (g *imageTally) summary() *ImageTokens {
	if g.t.Requests == 0 {
		return nil
	}
	t := g.t
	t.Tokens = t.Prompt - t.TextTarget
	t.PerImage = float64(t.Tokens) / float64(t.Images)
	return &t
}

// imagesNote is the text report's line on images ("" without any).
func imagesNote(t TokenCounts) string { return t.Images.String() }

// String is the images in one line for the reports ("" for none): "images:
// 8 in 4 requests; the engine charged 2608 prompt tokens beyond their
// text's 392 (326.0 per image)".
func (im *ImageTokens) String() string {
	if im == nil {
		return ""
	}
	return fmt.Sprintf("images: %d in %d requests; the engine charged %d prompt tokens beyond their text's %d (%.1f per image)",
		im.Images, im.Requests, im.Tokens, im.TextTarget, im.PerImage)
}
