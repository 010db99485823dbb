package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmbench-org/llmbench/engines"
)

// ReadContext asks the engine for the context one request may fill where
// its family states it (engines.Family.Context: llama.cpp's per-slot n_ctx
// in /props, vLLM's max_model_len in /v1/models). baseURL is the API root;
// the path is taken from its origin. A family that states none gives 0 and
// no error.
func ReadContext(ctx context.Context, hc *http.Client, baseURL, apiKey string, api engines.ContextAPI) (int, error) {
	if api.Path == "" {
		return 0, nil
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return 0, err
	}
	where := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: api.Path}).String()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return 0, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", where, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", where, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s answered %s", where, resp.Status)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return 0, fmt.Errorf("GET %s: not JSON: %v", where, err)
	}
	n, ok := field(v, api.Field)
	if !ok || n <= 0 || n != float64(int(n)) {
		return 0, fmt.Errorf("GET %s: no positive whole %s in the answer", where, api.Field)
	}
	return int(n), nil
}

// field walks a dotted path through decoded JSON; an array stands for its
// first element.
func field(v any, path string) (float64, bool) {
	for _, k := range strings.Split(path, ".") {
		if a, ok := v.([]any); ok {
			if len(a) == 0 {
				return 0, false
			}
			v = a[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[k]
	}
	n, ok := v.(float64)
	return n, ok
}
