package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCacheResetEndpoints: in each dialect that offers a reset, the same
// prompt sent again hits the prefix cache; after the dialect's own reset
// call it hits nothing; the cache then fills again. FastDeploy offers none.
func TestCacheResetEndpoints(t *testing.T) {
	t.Parallel()
	resets := map[string]func(t *testing.T, c *http.Client, root string){
		DialectVLLM: func(t *testing.T, c *http.Client, root string) {
			expectStatus(t, c, http.MethodPost, root+"/reset_prefix_cache", http.StatusOK)
		},
		DialectSGLang: func(t *testing.T, c *http.Client, root string) {
			expectStatus(t, c, http.MethodPost, root+"/flush_cache", http.StatusOK)
		},
		DialectLlamaCpp: func(t *testing.T, c *http.Client, root string) {
			resp, err := c.Get(root + "/slots")
			if err != nil {
				t.Fatal(err)
			}
			var slots []struct {
				ID int `json:"id"`
			}
			err = json.NewDecoder(resp.Body).Decode(&slots)
			resp.Body.Close()
			if err != nil || len(slots) == 0 {
				t.Fatalf("GET /slots: %v %v", slots, err)
			}
			for _, s := range slots {
				expectStatus(t, c, http.MethodPost, fmt.Sprintf("%s/slots/%d?action=erase", root, s.ID), http.StatusOK)
			}
			expectStatus(t, c, http.MethodPost, root+"/slots/0?action=restore", http.StatusBadRequest)
			expectStatus(t, c, http.MethodPost, root+"/slots/99999?action=erase", http.StatusBadRequest)
		},
	}
	for dialect, reset := range resets {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			e, ep := startEngine(t, Config{Dialect: dialect})
			root := strings.TrimSuffix(ep.BaseURL, "/v1")
			c := newClient()
			prompt := words("w", 200)
			send := func(id string) int {
				t.Helper()
				res := postStream(t, c, ep.BaseURL+"/chat/completions", clockSince(), map[string]string{"X-Request-Id": id},
					chatBody(map[string]any{"model": DefaultModel, "stream": true, "max_tokens": 2,
						"messages": []map[string]string{{"role": "user", "content": prompt}}}))
				if res.status != http.StatusOK {
					t.Fatalf("status %d", res.status)
				}
				return truthByID(t, e, func(r RequestTruth) bool { return r.HeaderID == id }).CachedTokens
			}
			if n := send("a"); n != 0 {
				t.Fatalf("first request hit %d cached tokens", n)
			}
			if n := send("b"); n == 0 {
				t.Fatal("the same prompt again hit nothing: no prefix cache to reset")
			}
			reset(t, c, root)
			if e.CacheResets() == 0 {
				t.Fatal("no reset carried out")
			}
			if n := send("c"); n != 0 {
				t.Errorf("after the reset the prompt hit %d cached tokens", n)
			}
			if n := send("d"); n == 0 {
				t.Error("the cache did not fill again after the reset")
			}
		})
	}
	t.Run("fastdeploy offers none", func(t *testing.T) {
		t.Parallel()
		_, ep := startEngine(t, Config{Dialect: DialectFastDeploy})
		root := strings.TrimSuffix(ep.BaseURL, "/v1")
		expectStatus(t, newClient(), http.MethodPost, root+"/reset_prefix_cache", http.StatusNotFound)
	})
}

func expectStatus(t *testing.T, c *http.Client, method, url string, want int) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, body, want)
	}
}

// TestSGLangFlushRefusedWhileBusy: SGLang flushes nothing while a request
// runs (400), and flushes once the engine is idle.
func TestSGLangFlushRefusedWhileBusy(t *testing.T) {
	t.Parallel()
	p, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p.DecodeBase = 20 * time.Millisecond // a request that runs a while
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: p})
	root := strings.TrimSuffix(ep.BaseURL, "/v1")
	c := newClient()
	resp := rawPost(t, c, ep.BaseURL+"/chat/completions", map[string]any{"model": DefaultModel, "stream": true, "max_tokens": 50,
		"ignore_eos": true, "messages": []map[string]string{{"role": "user", "content": words("w", 40)}}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the stream has begun: the request is in the engine
		t.Fatal(err)
	}
	expectStatus(t, c, http.MethodPost, root+"/flush_cache", http.StatusBadRequest)
	if e.CacheResets() != 0 {
		t.Fatal("flushed while a request ran")
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e.Truth() // waits until the request's end is recorded: the engine is idle
	expectStatus(t, c, http.MethodPost, root+"/flush_cache", http.StatusOK)
	if e.CacheResets() != 1 {
		t.Fatalf("%d resets", e.CacheResets())
	}
}
