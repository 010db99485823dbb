package scrape

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/redact"
)

// defaultClient scrapes the way every request llmbench makes reaches the
// engine (internal/httppolicy): a /metrics read through a proxy while the
// measured requests went direct would reconcile two different paths. Each
// scrape brings its own timeout in its context.
var defaultClient = httppolicy.Client(0)

// AcceptHeader asks for the classic text format, which every engine can
// serve: Python engines (prometheus_client) negotiate on Accept, and the
// classic format spares the OpenMetrics rewrite and its _created series.
// OpenMetrics served anyway is still parsed; so is anything else as text.
const AcceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// DefaultTimeout bounds a scrape whose Target sets no Timeout.
const DefaultTimeout = 10 * time.Second

// Target is one /metrics endpoint to scrape.
type Target struct {
	URL     string
	Dialect string        // a DialectFor name; "" or Auto detects from the names
	Timeout time.Duration // per scrape; 0 = DefaultTimeout (a Loop uses its Interval)
	Client  *http.Client  // nil = defaultClient (internal/httppolicy: direct, no redirect)
	// Bearer is sent as "Authorization: Bearer …" ("" = none): the
	// engine's API key, for an engine that guards its /metrics with it
	// (llama.cpp's --api-key guards every route but /health and /models).
	// The run sets it only for a URL on the engine's own origin
	// (run/engine.go), and it is never written anywhere.
	Bearer string
}

// Scrape fetches, parses and maps the target once. start is the run clock's
// origin. It never panics and never returns an error: a failed scrape is a
// Row with OK false and its reason, because a dead target is data too.
func (t Target) Scrape(ctx context.Context, start time.Time) (row Row) {
	row = Row{
		Target: t.URL,
		// Wall lines the scrape up with the engine's own logs and traces,
		// which carry wall-clock times. Round(0) strips the monotonic reading
		// so that comparing it with other wall times really uses the wall
		// clock, and so the value is the same after a JSON round trip.
		Wall: time.Now().Round(0),
		At:   time.Since(start),
	}
	began := time.Now()
	defer func() { row.Duration = time.Since(began) }()

	dialect, telemetry := TelemetryDialect(t.Dialect)
	var err error
	if !telemetry {
		dialect, err = DialectFor(t.Dialect)
	}
	if err != nil {
		row.Error = fmt.Sprintf("scrape %s: %v", t.URL, err)
		return row
	}
	body, contentType, status, err := t.fetch(ctx)
	row.Status, row.Bytes = status, len(body)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	fams, format, err := parse(body, contentType)
	row.Format = format
	if err != nil {
		row.Error = fmt.Sprintf("scrape %s: %v", t.URL, err)
		return row
	}
	snap := dialect.Map(fams)
	row.Snapshot = &snap
	row.OK = true
	return row
}

// fetch GETs the exposition and returns its body and content type.
func (t Target) fetch(ctx context.Context) (body []byte, contentType string, status int, err error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return nil, "", 0, fmt.Errorf("scrape %s: %w", t.URL, err)
	}
	req.Header.Set("Accept", AcceptHeader)
	// Said, as the measured requests say it (client/encoding.go): no
	// Accept-Encoding at all tells a proxy that any coding will do.
	req.Header.Set("Accept-Encoding", "identity")
	if t.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+t.Bearer)
	}
	client := t.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", 0, fmt.Errorf("scrape %s: %w", t.URL, timeoutError(ctx, timeout, err))
	}
	defer resp.Body.Close()
	raw, length, err := decoded(resp)
	if err != nil {
		return nil, "", resp.StatusCode, fmt.Errorf("scrape %s: %w", t.URL, err)
	}
	body, err = readBody(raw, length)
	if errors.Is(err, ErrBodyTooLarge) {
		return body, "", resp.StatusCode, fmt.Errorf("scrape %s: %w", t.URL, err)
	}
	if err != nil {
		return body, "", resp.StatusCode, fmt.Errorf("scrape %s: read body: %w", t.URL, timeoutError(ctx, timeout, err))
	}
	if httppolicy.IsRedirect(resp.StatusCode) {
		return body, "", resp.StatusCode, fmt.Errorf("scrape %s: HTTP %s: redirected to %s, not followed: point the scrape at the engine's /metrics itself",
			t.URL, resp.Status, redact.URL(resp.Header.Get("Location")))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		hint := "the server guards its metrics: give the run the engine's key (engine.api_key_env), which is sent to a metrics URL on the engine's own origin"
		if t.Bearer != "" {
			hint = "the engine's API key was sent and refused"
		}
		return body, "", resp.StatusCode, fmt.Errorf("scrape %s: HTTP %s: %s (%s)", t.URL, resp.Status, snippet(body), hint)
	}
	if resp.StatusCode != http.StatusOK {
		return body, "", resp.StatusCode, fmt.Errorf("scrape %s: HTTP %s: %s", t.URL, resp.Status, snippet(body))
	}
	return body, resp.Header.Get("Content-Type"), resp.StatusCode, nil
}

// decoded is the response body with the content coding a proxy added
// although identity was asked for taken off: gzip is what Prometheus's own
// scrapers ask for and what a proxy in front of /metrics adds, and readBody
// bounds what it expands to. Any other coding is named, not misread as text.
func decoded(resp *http.Response) (io.Reader, int64, error) {
	switch coding := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); coding {
	case "", "identity":
		return resp.Body, resp.ContentLength, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, 0, fmt.Errorf("a gzip body (Content-Encoding: %s) that does not decode: %w", coding, err)
		}
		return zr, -1, nil
	default:
		return nil, 0, fmt.Errorf("the body came in content coding %q although identity was asked for, and llmbench decodes only gzip for /metrics: scrape the engine directly rather than through the proxy that adds it", redact.PrintableLine(coding))
	}
}

// timeoutError says "timed out after D" when the scrape's own deadline
// passed, which net/http reports in several shapes.
func timeoutError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %v: %w", timeout, err)
	}
	return err
}

// snippet is the start of an error body, on one line.
func snippet(body []byte) string {
	const maxLen = 200
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}
