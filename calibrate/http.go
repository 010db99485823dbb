package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
)

// defaultTimeout bounds one calibration request when Config.HTTPClient is nil.
const defaultTimeout = 60 * time.Second

// maxResponse bounds a response body read (a tokenize answer of a 128k-token
// prompt with its ids is ~1 MB).
const maxResponse = 32 << 20

// statusError is a non-2xx answer.
type statusError struct {
	url    string
	status int
	body   string
}

func (e *statusError) Error() string {
	body := strings.TrimSpace(e.body)
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	if body == "" {
		return fmt.Sprintf("POST %s: %d %s", e.url, e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("POST %s: %d %s: %s", e.url, e.status, http.StatusText(e.status), body)
}

// notServed reports whether err says the engine does not serve that
// endpoint (404, 405, 501): the next method is tried.
func notServed(err error) bool {
	se, ok := err.(*statusError)
	return ok && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed || se.status == http.StatusNotImplemented)
}

// refused reports whether err is a 4xx: the endpoint exists but does not
// take this request's shape (SGLang's /tokenize without messages, a
// template that refuses a system role).
func refused(err error) bool {
	se, ok := err.(*statusError)
	return ok && se.status >= 400 && se.status < 500
}

// poster sends JSON bodies.
type poster struct {
	hc     *http.Client
	apiKey string
	// messages: the calibrated endpoint is the Messages API, whose headers
	// every request carries (messages.go).
	messages bool
}

func newPoster(cfg Config) poster {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = client.NewHTTPClient(defaultTimeout)
	}
	return poster{hc: hc, apiKey: cfg.APIKey, messages: cfg.ep.Kind == endpoints.KindMessages}
}

// post sends body as JSON to url and decodes a 2xx answer into out.
func (p poster) post(ctx context.Context, url string, body, out any) error {
	return p.postID(ctx, url, "", body, out)
}

// postID is post with a request id in X-Request-Id ("" = none).
func (p poster) postID(ctx context.Context, url, id string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	if p.messages {
		client.SetMessagesHeaders(req, p.apiKey)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("POST %s: reading the answer: %w", url, err)
	}
	if resp.StatusCode/100 != 2 {
		return &statusError{url: url, status: resp.StatusCode, body: string(data)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: unexpected answer (%v): %.200s", url, err, data)
	}
	return nil
}
