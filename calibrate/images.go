package calibrate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/workload"
)

// ImageObservation is what the engine charged one image of a size
// (decision 1502): the prompt tokens of a request of a short text and
// the image, less those of the same text alone, both through the chat
// endpoint's template (usage.prompt_tokens of real requests, max_tokens 1:
// no tokenizer endpoint counts images).
type ImageObservation struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Format string `json:"format"`
	Tokens int    `json:"tokens"`
}

// imageProbeText is the text beside the probed image (and alone).
const imageProbeText = "describe this picture"

// ProbeImages measures what the engine charges for one image of each of
// the given shapes (their text is counted by Probe, apart). It stops at
// the first error: an engine that takes no images says so there.
func ProbeImages(ctx context.Context, cfg Config, shapes []workload.Image) ([]ImageObservation, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if cfg.ep.Kind != endpoints.KindChat {
		return nil, fmt.Errorf("calibrate: images go in chat requests, not %s", cfg.ep.Name)
	}
	p := newPoster(cfg)
	url := endpoints.URL(cfg.BaseURL, cfg.ep.Path)
	idField, _ := client.IDField(cfg.Dialect)
	sent := 0
	count := func(parts []map[string]any) (int, error) {
		sent++
		id := client.ProbeIDPrefix + "image-" + strconv.Itoa(sent)
		body := withModel(cfg, map[string]any{"max_tokens": 1, "stream": false,
			"messages": []map[string]any{{"role": "user", "content": parts}}})
		if idField != "" {
			body[idField] = id
		}
		var out struct {
			Usage *struct {
				PromptTokens *int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := p.postID(ctx, url, id, body, &out); err != nil {
			return 0, err
		}
		if out.Usage == nil || out.Usage.PromptTokens == nil {
			return 0, fmt.Errorf("POST %s: the answer has no usage.prompt_tokens", url)
		}
		return *out.Usage.PromptTokens, nil
	}
	text := map[string]any{"type": "text", "text": imageProbeText}
	alone, err := count([]map[string]any{text})
	if err != nil {
		return nil, err
	}
	var out []ImageObservation
	for _, im := range shapes {
		u, err := im.DataURL()
		if err != nil {
			return out, err
		}
		with, err := count([]map[string]any{text, {"type": "image_url", "image_url": map[string]any{"url": u}}})
		if err != nil {
			return out, fmt.Errorf("an image of %dx%d: %w", im.Width, im.Height, err)
		}
		out = append(out, ImageObservation{Width: im.Width, Height: im.Height, Format: im.Format, Tokens: with - alone})
	}
	return out, nil
}
