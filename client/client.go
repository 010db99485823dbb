package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Config says where and how to send requests. The zero value of every
// optional field is a sensible default.
type Config struct {
	BaseURL string // e.g. http://127.0.0.1:PORT/v1
	APIKey  string // sent as a bearer token when not empty
	Model   string
	// Dialect decides the body field that carries the request id:
	// sglang "rid"; vllm and fastdeploy "request_id"; "" none (the
	// X-Request-Id header is sent in every dialect).
	Dialect string
	// Start is the run clock's origin: every Record time is time.Since(Start),
	// read on the monotonic clock. Zero means "when New was called".
	Start time.Time
	// Timeout bounds one request, whole stream included; 0 means none.
	Timeout time.Duration
	// MaxConns is the expected concurrency; the idle pool is sized to it so
	// that N concurrent streams keep N connections alive between requests.
	MaxConns int
	// IncludeUsage asks for stream_options.include_usage, so the output token
	// count comes from the server rather than from counting chunks.
	IncludeUsage bool
	// HTTPClient replaces the client built from the settings above (tests
	// inject one). MaxConns then has no effect on pooling.
	HTTPClient *http.Client
}

// Client sends streaming chat requests and records what came back. It is
// safe for concurrent use.
type Client struct {
	cfg     Config
	http    *http.Client
	api     *openai.Client
	idField string // the dialect's body field for the request id, "" for none
	models  string // the URL Warm requests
}

const (
	// dialTimeout bounds connection set-up; a request that cannot connect
	// within it fails with class connect, whatever its own Timeout.
	dialTimeout = 10 * time.Second
	// idleTimeout is how long an unused connection stays in the pool.
	idleTimeout = 90 * time.Second
	// emptyLinesLimit raises go-openai's cap on consecutive non-data lines
	// (default 300), which SSE comments sent as keep-alives while a request
	// waits in a long queue would otherwise exceed.
	emptyLinesLimit = 1 << 20
)

// idFields maps a dialect to the body field that carries the request id.
var idFields = map[string]string{
	"":           "",
	"sglang":     "rid",
	"vllm":       "request_id",
	"fastdeploy": "request_id",
}

// New checks cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base URL %q: %w", cfg.BaseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port]/path", cfg.BaseURL)
	}
	idField, ok := idFields[cfg.Dialect]
	if !ok {
		return nil, fmt.Errorf("client: unknown dialect %q (want sglang, vllm, fastdeploy or empty)", cfg.Dialect)
	}
	if cfg.Model == "" {
		return nil, errors.New("client: model is empty")
	}
	if cfg.Timeout < 0 || cfg.MaxConns < 0 {
		return nil, fmt.Errorf("client: negative timeout %v or max conns %d", cfg.Timeout, cfg.MaxConns)
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: newTransport(cfg.MaxConns)}
	}

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &extrasDoer{next: hc}
	oc.EmptyMessagesLimit = emptyLinesLimit
	return &Client{
		cfg:     cfg,
		http:    hc,
		api:     openai.NewClientWithConfig(oc),
		idField: idField,
		models:  oc.BaseURL + "/models",
	}, nil
}

// newTransport tunes an HTTP/1.1 transport for many long-lived streams.
//   - HTTP/1.1 only: one stream per connection, as the engines' own
//     benchmark clients do; HTTP/2 would multiplex every stream on one
//     connection and measure something else.
//   - The idle pool holds maxConns connections per host (Go keeps 2 by
//     default, so every later request beyond 2 would dial again).
//   - No cap on connections per host: a cap would queue requests inside the
//     transport, where the wait would silently count as server latency.
//   - No compression: a gzip layer would buffer SSE chunks.
//   - No proxy from the environment: the engine is measured directly; inject
//     Config.HTTPClient to go through one.
func newTransport(maxConns int) *http.Transport {
	pool := max(maxConns, 2)
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        pool,
		MaxIdleConnsPerHost: pool,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     idleTimeout,
		TLSHandshakeTimeout: dialTimeout,
		DisableCompression:  true,
	}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return t
}

// Warm opens n connections and leaves them idle in the pool, so the measured
// phase does not pay for connection set-up. It sends n concurrent GET
// requests to BaseURL/models and holds every response open until all n have
// answered, which forces n distinct connections. Any HTTP answer counts, even
// a 404: only the connection matters. The pool keeps at most MaxConns idle
// connections (when the Client built its own transport), so warm no more.
func (c *Client) Warm(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	resps := make([]*http.Response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.models, nil)
			if err != nil {
				errs[i] = err
				return
			}
			if c.cfg.APIKey != "" {
				req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
			}
			resps[i], errs[i] = c.http.Do(req)
		})
	}
	wg.Wait()
	for _, resp := range resps {
		if resp != nil {
			// Reading to the end hands the connection back to the pool.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("client: warm %d connections to %s: %w", n, c.models, err)
	}
	return nil
}

// Close closes the idle connections, those of an injected Config.HTTPClient
// included. Requests in flight are not affected.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// since is the run clock.
func (c *Client) since() time.Duration { return time.Since(c.cfg.Start) }
