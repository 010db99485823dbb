// Package cachereset empties an engine's prefix cache through the engine's
// own endpoint (engines.CacheResetAPI), before a phase that starts cold
// (docs/decisions/1702). It says what it did, never guesses: an engine
// that offers no reset, or refuses it, is a Result with OK false and why.
package cachereset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/redact"
)

// Result is what one reset did.
type Result struct {
	API    engines.CacheResetAPI `json:"api,omitempty"` // "" when the engine offers none
	OK     bool                  `json:"ok"`
	Calls  int                   `json:"calls"`            // HTTP requests sent
	Status int                   `json:"status,omitempty"` // the last one's status
	Error  string                `json:"error,omitempty"`
	Took   time.Duration         `json:"took_ns"`
}

// retryFor bounds the retries of a reset the engine refused because
// requests were still in it (SGLang's 400): the phase before has drained
// on the client's side, the engine may still be finishing.
const retryFor = 5 * time.Second

// Reset empties the prefix cache of the engine whose API root (no /v1) is
// root, by family's reset. client nil = the house transport policy. key,
// when not empty, is the run's API key: every request of the reset carries
// it as a bearer token, as the run's own requests do (SGLang and llama.cpp
// refuse their reset endpoints without it), and no Result says it, even
// where the engine echoed it.
func Reset(ctx context.Context, client *http.Client, root, family, key string) Result {
	res := reset(ctx, client, root, family, key)
	if key != "" {
		res.Error = redact.Known(res.Error, key)
	}
	return res
}

func reset(ctx context.Context, client *http.Client, root, family, key string) Result {
	began := time.Now()
	var api engines.CacheResetAPI
	if f, err := engines.Lookup(family); err == nil {
		api = f.CacheReset
	}
	res := Result{API: api}
	if api == "" {
		who := family
		if who == "" {
			who = "an engine of unknown family"
		}
		res.Error = fmt.Sprintf("%s offers no prefix-cache reset llmbench knows", who)
		return res
	}
	if client == nil {
		client = httppolicy.Client(30 * time.Second)
	}
	root = strings.TrimSuffix(root, "/")
	c := caller{client: client, key: key, family: family}
	switch api {
	case engines.CacheResetLlamaCppSlots:
		res = c.eraseSlots(ctx, root, res)
	default:
		method, path, _ := strings.Cut(string(api), " ")
		deadline := time.Now().Add(retryFor)
		for {
			res.Status, res.Error = c.call(ctx, method, root+path)
			res.Calls++
			res.OK = res.Error == ""
			if res.OK || res.Status != http.StatusBadRequest || !time.Now().Before(deadline) || !sleep(ctx, 100*time.Millisecond) {
				break
			}
		}
	}
	res.Took = time.Since(began)
	return res
}

// caller sends a reset's requests, with the run's key.
type caller struct {
	client *http.Client
	key    string
	family string
}

// request is a request with the run's key as its bearer token.
func (c caller) request(ctx context.Context, method, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(nil))
	if err != nil {
		return nil, err
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// eraseSlots erases every slot llama.cpp lists.
func (c caller) eraseSlots(ctx context.Context, root string, res Result) Result {
	req, err := c.request(ctx, http.MethodGet, root+"/slots")
	if err != nil {
		res.Error = err.Error()
		return res
	}
	resp, err := c.client.Do(req)
	res.Calls++
	if err != nil {
		res.Error = err.Error()
		return res
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	resp.Body.Close()
	res.Status = resp.StatusCode
	if err != nil || resp.StatusCode != http.StatusOK {
		res.Error = c.refused(req, resp.StatusCode, body) + errOrEmpty(err)
		return res
	}
	var slots []struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal(body, &slots); err != nil || len(slots) == 0 {
		res.Error = fmt.Sprintf("GET /slots: no slots in %s", snippet(body))
		return res
	}
	for _, s := range slots {
		res.Status, res.Error = c.call(ctx, http.MethodPost, fmt.Sprintf("%s/slots/%d?action=erase", root, s.ID))
		res.Calls++
		if res.Error != "" {
			return res
		}
	}
	res.OK = true
	return res
}

// call sends one request and says what went wrong ("" when it answered 2xx).
func (c caller) call(ctx context.Context, method, url string) (int, string) {
	req, err := c.request(ctx, method, url)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, redact.Text(err.Error())
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, c.refused(req, resp.StatusCode, body)
	}
	return resp.StatusCode, ""
}

// refused says which endpoint refused the reset, with what status, what
// that status most likely means there, and the engine's own words:
// "POST /flush_cache: HTTP 401 Unauthorized (the engine wants an API key:
// none was sent; set engine.api_key_env): {"error": "Unauthorized"}".
func (c caller) refused(req *http.Request, status int, body []byte) string {
	out := fmt.Sprintf("%s %s: HTTP %d %s", req.Method, req.URL.Path, status, http.StatusText(status))
	if why := c.meaning(status); why != "" {
		out += " (" + why + ")"
	}
	if b := snippet(body); b != "" {
		out += ": " + b
	}
	return out
}

// meaning is what a refusal's status says of the reset.
func (c caller) meaning(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		if c.key == "" {
			return "the engine wants an API key: none was sent; set engine.api_key_env"
		}
		return "the engine refused the run's API key"
	case http.StatusNotFound:
		if c.family == engines.VLLM {
			return "vLLM serves it only when started with VLLM_SERVER_DEV_MODE=1"
		}
		return "the engine does not serve it: an older release, or a proxy in front"
	case http.StatusMethodNotAllowed:
		return "the engine serves the path, not with this method: another release's API"
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}
