package client

// A chat message with images is sent as the chat API's content parts:
// [{"type":"text","text":…},{"type":"image_url","image_url":{"url":…}}].
// A message without images keeps its plain string content, so requests
// without images are byte for byte what they were.

// partsBody is chatBody for a request with images.
type partsBody struct {
	Model    string         `json:"model"`
	Messages []partsMessage `json:"messages"`
	Stream   bool           `json:"stream"`
}

// partsMessage is a message whose content is a string (no images) or parts.
type partsMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     *string   `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// withImageParts returns b as it is when no message has images, else the
// same body with each message that has them as content parts: its text
// first (when it has any), then its images in order.
func withImageParts(b chatBody) any {
	if countImages(b.Messages) == 0 {
		return b
	}
	msgs := make([]partsMessage, len(b.Messages))
	for i, m := range b.Messages {
		msgs[i] = partsMessage{Role: m.Role, Content: m.Content}
		if len(m.ImageURLs) == 0 {
			continue
		}
		parts := make([]contentPart, 0, 1+len(m.ImageURLs))
		if m.Content != "" {
			parts = append(parts, contentPart{Type: "text", Text: &m.Content})
		}
		for _, u := range m.ImageURLs {
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: u}})
		}
		msgs[i].Content = parts
	}
	return partsBody{Model: b.Model, Messages: msgs, Stream: b.Stream}
}

// countImages is the number of images of the messages.
func countImages(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ImageURLs)
	}
	return n
}
