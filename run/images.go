package run

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/llmbench-org/llmbench/calibrate"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/workload"
)

// clientMessages is the client's view of planned messages: each image as
// the data URL it is sent as, made ahead in images or now (a plan names
// images, it does not hold their bytes: decisions 1500, 1503).
func clientMessages(msgs []workload.Message, images *imageBank) []client.Message {
	out := make([]client.Message, len(msgs))
	for i, m := range msgs {
		out[i] = clientMessage(m) // session.go: tool calls and their answers
		if len(m.Images) == 0 {
			continue
		}
		out[i].ImageURLs = make([]string, len(m.Images))
		for k, im := range m.Images {
			out[i].ImageURLs[k] = images.dataURL(im)
		}
	}
	return out
}

// imagesNote says what images a planned request carries, for the plan's
// table: " + 2 images (512x512 png, 1024x768 png)".
func imagesNote(msgs []workload.Message) string {
	n := workload.CountImages(msgs)
	if n == 0 {
		return ""
	}
	var sizes []string
	for _, m := range msgs {
		for _, im := range m.Images {
			sizes = append(sizes, fmt.Sprintf("%dx%d %s", im.Width, im.Height, im.Format))
		}
	}
	word := "images"
	if n == 1 {
		word = "image"
	}
	return fmt.Sprintf(" + %d %s (%s)", n, word, strings.Join(sizes, ", "))
}

// probeImages measures what the engine charges an image of each size the
// plan's requests carry, into res (calibration.json): their text is
// calibrated as any text, their images apart (decision 1502). An engine
// that refuses images is noted, and the run goes on: its requests will say
// the same.
func probeImages(ctx context.Context, cfg calibrate.Config, plan *workload.Plan, res *calibrate.Result, log io.Writer) {
	shapes := plan.ImageShapes()
	if len(shapes) == 0 {
		return
	}
	obs, err := calibrate.ProbeImages(ctx, cfg, shapes)
	res.Images = obs
	for _, o := range obs {
		res.Notes = append(res.Notes, fmt.Sprintf("an image of %dx%d (%s) costs %d prompt tokens (with text and without)", o.Width, o.Height, o.Format, o.Tokens))
	}
	if err != nil {
		note := redact.Text(fmt.Sprintf("image calibration failed: %v", err))
		res.Notes = append(res.Notes, note)
		fmt.Fprintf(log, "llmbench: %s\n", note)
	}
}
