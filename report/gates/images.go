package gates

import "github.com/llmbench-org/llmbench/report"

// imageMetrics: what the requests' images cost (report.ImageTokens,
// decision 1502), named after summary.json's client.tokens.images:
// client.tokens.images.images (images the successful requests carried),
// .tokens (the prompt tokens the engine charged beyond their text) and
// .per_image. Absent for a run that sent no image, so a gate on them is an
// error there rather than a pass on nothing.
func (v vocabularyBuilder) imageMetrics() {
	read := func(get func(*report.ImageTokens) float64) func(*report.Summary) reading {
		return func(s *report.Summary) reading {
			im := s.Client.Tokens.Images
			if im == nil {
				return absent("no successful request carried an image")
			}
			return value(get(im))
		}
	}
	v.add(metric{name: "client.tokens.images.images", unit: count, better: neither, doc: "images the successful requests carried",
		read: read(func(im *report.ImageTokens) float64 { return float64(im.Images) })})
	v.add(metric{name: "client.tokens.images.tokens", unit: count, better: neither,
		doc:  "prompt tokens the engine charged for the images: its prompt tokens less the text's (the plan's target)",
		read: read(func(im *report.ImageTokens) float64 { return float64(im.Tokens) })})
	v.add(metric{name: "client.tokens.images.per_image", unit: count, better: neither,
		doc:  "prompt tokens the engine charged per image",
		read: read(func(im *report.ImageTokens) float64 { return im.PerImage })})
}
