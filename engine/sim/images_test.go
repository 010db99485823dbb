package sim

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
	"testing"
)

// TestImageTokens: Qwen2-VL's count, the values worked by hand from
// transformers' smart_resize (Python's round: 70/28 = 2.5 rounds to 2).
func TestImageTokens(t *testing.T) {
	t.Parallel()
	tests := []struct{ w, h, want int }{
		{512, 512, 18*18 + 2},   // 504×504
		{1024, 768, 37*27 + 2},  // 1036×756
		{1024, 1024, 35*35 + 2}, // 1036² is over 1280 squares: scaled down to 980×980
		{1920, 1080, 47*26 + 2}, // over the bound: 1316×728
		{3000, 2000, 43*29 + 2}, // over the bound: 1204×812
		{28, 28, 2*2 + 2},       // under 56×56: scaled up to 56×56
		{10, 10, 2*2 + 2},       // rounds to nothing, scaled up
		{70, 70, 2*2 + 2},       // 2.5 squares round to 2 (half to even), not 3
		{42, 42, 2*2 + 2},       // 1.5 rounds to 2
		{2800, 14, 29*1 + 2},    // ratio 200 is allowed
		{448, 448, 16*16 + 2},   // exactly 16 squares
		{1400, 1400, 35*35 + 2}, // 50×50 squares are over 1280: 980×980
	}
	for _, tt := range tests {
		if got := ImageTokens(tt.w, tt.h); got != tt.want {
			t.Errorf("ImageTokens(%d, %d) = %d, want %d", tt.w, tt.h, got, tt.want)
		}
	}
}

// dataURL encodes a w×h image of one colour (c picks it) as a data: URL.
func dataURL(t *testing.T, format string, w, h int, c uint8) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c, 255-c, c/2, 255
	}
	var b bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&b, img, nil)
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func partsBody(text string, urls ...string) []byte {
	parts := []map[string]any{{"type": "text", "text": text}}
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}})
	}
	return chatBody(map[string]any{
		"model": "m", "max_tokens": 4, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       []map[string]any{{"role": "user", "content": parts}},
	})
}

// TestChatWithImages: image parts are charged in the prompt (usage and
// ground truth agree), the same image bytes at the same place hit the
// prefix cache and other bytes do not, and what the engine cannot read is
// refused with a 400.
func TestChatWithImages(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{})
	url := ep.BaseURL + "/chat/completions"
	clock := clockSince()
	big := dataURL(t, "png", 512, 512, 10)
	small := dataURL(t, "jpeg", 70, 70, 20)
	other := dataURL(t, "png", 512, 512, 200)
	const text = "one two three"
	want := 3 + ImageTokens(512, 512) + ImageTokens(70, 70)

	usage := func(id string, body []byte) (prompt, cached int) {
		t.Helper()
		res := postStream(t, newClient(), url, clock, map[string]string{"X-Request-Id": id}, body)
		if res.status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", id, res.status, res.body)
		}
		last := res.chunks[len(res.chunks)-1]
		if last.Usage == nil {
			t.Fatalf("%s: no usage", id)
		}
		return last.Usage.PromptTokens, last.Usage.PromptTokensDetails.CachedTokens
	}
	if p, _ := usage("img-1", partsBody(text, big, small)); p != want {
		t.Errorf("first request: prompt_tokens %d, want %d (3 words + 326 + 6)", p, want)
	}
	p, cached := usage("img-2", partsBody(text, big, small))
	if p != want || cached < want-2*16 {
		t.Errorf("the same request again: prompt %d, cached %d; want %d, nearly all cached", p, cached, want)
	}
	if _, cached := usage("img-3", partsBody(text, other, small)); cached >= 16 {
		t.Errorf("another image of the same size: %d tokens cached, want none (the text is under one block)", cached)
	}
	truth := map[string]RequestTruth{}
	for _, tr := range e.Truth() {
		truth[tr.HeaderID] = tr
	}
	if tr := truth["img-1"]; tr.Images != 2 || tr.ImageTokens != want-3 || tr.PromptTokens != want {
		t.Errorf("truth of img-1: %d images, %d image tokens, %d prompt tokens; want 2, %d, %d", tr.Images, tr.ImageTokens, tr.PromptTokens, want-3, want)
	}

	for _, tt := range []struct {
		name, content, want string
	}{
		{"not a data URL", `[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]`, "data: URLs only"},
		{"not base64", `[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]`, "base64 data: URL"},
		{"not an image", `[{"type":"image_url","image_url":{"url":"data:image/png;base64,aGVsbG8gd29ybGQ="}}]`, "not a PNG or JPEG"},
		{"no url", `[{"type":"image_url","image_url":{}}]`, "needs image_url.url"},
		{"audio", `[{"type":"input_audio","input_audio":{}}]`, "is not supported (text and image_url only)"},
		{"too long", `[{"type":"image_url","image_url":{"url":"` + dataURL(t, "png", 402, 2, 1) + `"}}]`, "aspect ratio"},
	} {
		body := `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":` + tt.content + `}]}`
		resp, err := newClient().Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b.String(), tt.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tt.name, resp.StatusCode, b.String(), tt.want)
		}
	}
}
