package client

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImagesAsContentParts: a message with images goes as the chat API's
// content parts (text first, then each image in order), one without keeps
// its string content, and the record counts the images.
func TestImagesAsContentParts(t *testing.T) {
	t.Parallel()
	h, got := recording(t, streamOf(fullStream("r", 2)...))
	srv := serve(t, h)
	c := newTestClient(t, srv.URL, nil)
	r := request("img")
	r.Messages = []Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "what is this", ImageURLs: []string{"data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"}},
		{Role: "user", ImageURLs: []string{"https://example.com/c.png"}},
	}
	rec := c.Do(t.Context(), r)
	if !rec.OK() {
		t.Fatalf("request failed: %s %s", rec.ErrorClass, rec.Error)
	}
	if rec.Images != 3 {
		t.Errorf("record counts %d images, want 3", rec.Images)
	}
	sent := <-got
	want := []any{
		map[string]any{"role": "system", "content": "be brief"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is this"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,BBBB"}},
		}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/c.png"}},
		}},
	}
	if d := cmp.Diff(want, sent.body["messages"]); d != "" {
		t.Errorf("messages sent (-want +got):\n%s", d)
	}
	if sent.body["model"] != "test-model" || sent.body["stream"] != true {
		t.Errorf("body %v: the other members must stay", sent.body)
	}

	// Without images the body is what it always was, byte for byte.
	b, _ := json.Marshal(withImageParts(chatBody{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}, Stream: true}))
	if string(b) != `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}` {
		t.Errorf("a body without images: %s", b)
	}
}

// TestRecordImagesRoundTrip: the images count survives requests.jsonl.
func TestRecordImagesRoundTrip(t *testing.T) {
	t.Parallel()
	rec := Record{ID: "a", Images: 4, PromptTokens: 700, TargetPromptTokens: 64}
	line := rec.AppendJSON(nil)
	var std Record
	if err := json.Unmarshal(line, &std); err != nil || std.Images != 4 {
		t.Fatalf("encoding/json reads %s as %+v (%v)", line, std, err)
	}
	var back Record
	if err := DecodeRecord(line, &back); err != nil || back.Images != 4 {
		t.Errorf("DecodeRecord(%s) = %+v, %v; want 4 images", line, back, err)
	}
}
