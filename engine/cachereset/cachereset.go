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
// root, by family's reset. client nil = the house transport policy.
func Reset(ctx context.Context, client *http.Client, root, family string) Result {
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
	switch api {
	case engines.CacheResetLlamaCppSlots:
		res = eraseSlots(ctx, client, root, res)
	default:
		method, path, _ := strings.Cut(string(api), " ")
		deadline := time.Now().Add(retryFor)
		for {
			res.Status, res.Error = call(ctx, client, method, root+path)
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

// eraseSlots erases every slot llama.cpp lists.
func eraseSlots(ctx context.Context, client *http.Client, root string, res Result) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/slots", nil)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	resp, err := client.Do(req)
	res.Calls++
	if err != nil {
		res.Error = err.Error()
		return res
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	resp.Body.Close()
	res.Status = resp.StatusCode
	if err != nil || resp.StatusCode != http.StatusOK {
		res.Error = fmt.Sprintf("GET /slots: HTTP %d %s%v", resp.StatusCode, snippet(body), errOrEmpty(err))
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
		res.Status, res.Error = call(ctx, client, http.MethodPost, fmt.Sprintf("%s/slots/%d?action=erase", root, s.ID))
		res.Calls++
		if res.Error != "" {
			return res
		}
	}
	res.OK = true
	return res
}

// call sends one request and says what went wrong ("" when it answered 2xx).
func call(ctx context.Context, client *http.Client, method, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(nil))
	if err != nil {
		return 0, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Sprintf("%s %s: HTTP %d %s", method, req.URL.Path, resp.StatusCode, snippet(body))
	}
	return resp.StatusCode, ""
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
