package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/internal/httppolicy"
)

// External is an engine that is already running somewhere. Start finds out
// what the scenario left unsaid: the model, when the server serves exactly
// one, and the metrics URL, when the API's own origin serves /metrics (as
// vLLM, SGLang, TGI and llama.cpp do). Stop does nothing: llmbench did not
// start it.
type External struct {
	Endpoint Endpoint
	APIKey   string       // sent to /v1/models and the probe of /metrics as a bearer token, as the client sends it
	HTTP     *http.Client // nil: a client with a 5 s timeout
}

var _ Engine = External{}

// Start returns the endpoint, with the model and metrics URL discovered when
// they are not configured. An unknown model is an error (there is nothing to
// request), returned with the endpoint as far as it was found out; a missing
// /metrics is only a note (the run reports the client's view alone).
func (e External) Start(ctx context.Context) (Endpoint, error) {
	ep := e.Endpoint
	ep.Notes = slices.Clone(ep.Notes)
	hc := e.HTTP
	if hc == nil {
		hc = httppolicy.Client(5 * time.Second)
	}
	if ep.MetricsURL == "" {
		u, err := originMetricsURL(ep.BaseURL)
		if err == nil {
			err = probeMetrics(ctx, hc, u, e.APIKey)
		}
		if err != nil {
			ep.Notes = append(ep.Notes, fmt.Sprintf("no metrics: %v; set engine.metrics_url to scrape the engine", err))
		} else {
			ep.MetricsURL = u
			ep.Notes = append(ep.Notes, fmt.Sprintf("metrics at %s, beside the API (engine.metrics_url sets another)", u))
		}
	}
	if ep.Model == "" {
		model, err := e.onlyModel(ctx, hc)
		if err != nil {
			return ep, err
		}
		ep.Model = model
		ep.Notes = append([]string{fmt.Sprintf("model %s: the only one %s/models lists", model, ep.BaseURL)}, ep.Notes...)
	}
	return ep, nil
}

// Stop does nothing: llmbench did not start it.
func (External) Stop(context.Context) error { return nil }

// onlyModel asks the server which models it serves and returns the one.
func (e External) onlyModel(ctx context.Context, hc *http.Client) (string, error) {
	u := endpoints.URL(e.Endpoint.BaseURL, "/models")
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("model: not set in the scenario, and GET %s %s: set model", u, fmt.Sprintf(format, args...))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fail("cannot be built: %v", err)
	}
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// Nothing answered: the model is not the problem.
		return "", fmt.Errorf("GET %s: %v: is the engine running at %s?", u, unwrapURLError(err), e.Endpoint.BaseURL)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fail("failed while reading: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fail("answered %s: %s", resp.Status, snippet(body))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return fail("answered what is not a model list (%v): %s", err, snippet(body))
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return fail("lists no model")
	default:
		return fail("lists %d models (%s), so which one is meant is the scenario's to say", len(ids), strings.Join(ids, ", "))
	}
}

// originMetricsURL is /metrics beside an engine's own API root (/v1 at the
// server's root). A base URL with another path is most likely a gateway,
// whose /metrics would be the gateway's, so none is guessed for it.
func originMetricsURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("engine.base_url %q is not an absolute URL", base)
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "/v1" && p != "" {
		return "", fmt.Errorf("engine.base_url's path %q is not /v1 at the server's root (a gateway?), so /metrics is not guessed", u.Path)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(), nil
}

// probeMetrics checks that u serves a Prometheus exposition: status 200 and
// a text or OpenMetrics content type (an API that answers every path with
// JSON or HTML is not one). The API key goes with it, as it goes with the
// scrapes of the engine's own origin: llama.cpp's --api-key guards /metrics.
func probeMetrics(ctx context.Context, hc *http.Client, u, apiKey string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5")
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, unwrapURLError(err))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", u, resp.Status)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || (mt != "text/plain" && mt != "application/openmetrics-text") {
		return fmt.Errorf("GET %s answered content type %q, not a Prometheus exposition", u, resp.Header.Get("Content-Type"))
	}
	return nil
}

// unwrapURLError drops net/http's "Get URL:" prefix, which the messages
// here already carry.
func unwrapURLError(err error) error {
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}

// snippet is the start of a response body, for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", s)
}
