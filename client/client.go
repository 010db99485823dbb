package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/redact"
)

// Config says where and how to send requests. The zero value of every
// optional field is a sensible default.
type Config struct {
	BaseURL string // e.g. http://127.0.0.1:PORT/v1
	APIKey  string // sent as a bearer token when not empty
	Model   string
	// Dialect names the engine family (package engines) whose body field
	// carries the request id (engines.IDs.BodyField: sglang "rid", vllm and
	// fastdeploy "request_id", others none); auto and "" send none (the
	// X-Request-Id header is sent in every dialect). DialectNames lists
	// them, IDField tells the field.
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
	// Endpoint names a registered endpoint (package endpoints): EndpointChat
	// ("" means the same: POST /chat/completions with the messages),
	// EndpointCompletions (POST /completions with a prompt string: the
	// messages' contents joined by newlines, no chat template), or another
	// of those kinds.
	Endpoint string
	// NoStream sends stream:false: the response comes whole, so only E2E
	// and usage are measured (no TTFT, ITL or chunks); records say NoStream.
	// stream_options is not sent then.
	NoStream bool
	// ExtraBody is merged into every request body: sampling parameters,
	// logprobs, ignore_eos, min_tokens, SGLang's lora_path… A key the
	// request sets itself wins: stream_options is merged member by member
	// (include_usage from IncludeUsage wins; dropped when NoStream), and
	// max_tokens, min_tokens, ignore_eos and the dialect's id field are sent
	// from ExtraBody only for requests that do not set them. model, stream,
	// messages (chat) and prompt (completions) are refused: set Model (a
	// vLLM LoRA adapter is selected by its name as the model) or NoStream.
	ExtraBody map[string]any
	// Headers are sent with every request (Warm's too), after the client's
	// own (so they may replace Authorization or Accept); X-Request-Id is
	// always the request's id. "Host" sets the request's Host.
	Headers map[string]string
	// SessionHeader names one more header carrying Request.Session
	// besides X-Session-Id (a router's affinity key); "" for none.
	SessionHeader string
	// HTTPClient replaces the client built from the settings above (tests
	// inject one). MaxConns then has no effect on pooling.
	HTTPClient *http.Client
}

// Client sends streaming chat requests and records what came back. It is
// safe for concurrent use.
type Client struct {
	cfg     Config
	http    *http.Client
	sender  *sender
	idField string // the dialect's body field for the request id, "" for none
	models  string // the URL Warm requests

	endpoint      endpoints.Endpoint // where requests go and the body they carry
	url           string             // BaseURL + endpoint.Path
	streamOptions []byte             // the stream_options object sent, nil for none
	extraBody     []extraMember      // Config.ExtraBody but stream_options, by key
	extraLen      int                // the bytes of extraBody's members
	// choices and extraMaxTokens are the extra body's n (1 when unset) and
	// max_tokens: what bounds a response's claims (claims.go).
	choices, extraMaxTokens int
	inflight                inflightSet // the requests in flight, for the stall watchdog (stall.go)
}

// The built-in endpoints Config.Endpoint accepts (package endpoints owns
// them, and lists any other registered one).
const (
	EndpointChat        = endpoints.Chat        // POST {BaseURL}/chat/completions
	EndpointCompletions = endpoints.Completions // POST {BaseURL}/completions
	EndpointMessages    = endpoints.Messages    // POST {BaseURL}/messages: Anthropic's Messages API (messages.go)
)

// extraMember is one Config.ExtraBody member, rendered `,"key":value`.
type extraMember struct {
	key    string
	member []byte
}

const (
	// emptyLinesLimit caps consecutive skipped lines in a stream (go-openai's
	// default of 300 would be exceeded by SSE comments sent as keep-alives
	// while a request waits in a long queue).
	emptyLinesLimit = 1 << 20
)

// autoDialect is scrape's name for "detect the engine from /metrics"
// (scrape.Auto): the engine is unknown, so no body field carries the id.
const autoDialect = "auto"

// DialectNames lists the dialects Config.Dialect accepts besides "": every
// engine family (package engines) and "auto".
func DialectNames() []string { return append(engines.Names(), autoDialect) }

// ProbeIDPrefix begins the ids of the requests llmbench sends before a run
// to learn the engine (calibration probes), so that an engine's logs and
// traces tell them from the run's requests and from foreign traffic.
const ProbeIDPrefix = "llmbench-probe-"

// IDField returns the request body field that carries the request id in
// dialect ("" when the engine takes none, and for the empty dialect), or an
// error naming the known dialects.
func IDField(dialect string) (string, error) {
	if dialect == "" || dialect == autoDialect {
		return "", nil
	}
	f, err := engines.Lookup(dialect)
	if err != nil {
		return "", fmt.Errorf("client: unknown dialect %q (want one of %s, or empty)", dialect, strings.Join(DialectNames(), ", "))
	}
	return f.IDs.BodyField, nil
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
	idField, err := IDField(cfg.Dialect)
	if err != nil {
		return nil, err
	}
	endpoint, err := endpoints.Lookup(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	switch endpoint.Kind { // the kinds post builds a body for
	case endpoints.KindChat, endpoints.KindCompletion, endpoints.KindResponses, endpoints.KindMessages:
	case endpoints.KindEmbeddings, endpoints.KindRerank: // pooling.go
	default:
		return nil, fmt.Errorf("client: endpoint %q: the client builds no request of kind %q", endpoint.Name, endpoint.Kind)
	}
	if err := checkHeaders(cfg.Headers); err != nil {
		return nil, err
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
		hc = &http.Client{Transport: httppolicy.Transport(cfg.MaxConns), CheckRedirect: httppolicy.NoRedirect}
	}

	cfg.Headers = maps.Clone(cfg.Headers) // the caller may change its map later
	c := &Client{
		cfg:      cfg,
		http:     hc,
		sender:   &sender{next: hc, headers: cfg.Headers},
		idField:  idField,
		models:   endpoints.URL(cfg.BaseURL, "/models"),
		endpoint: endpoint,
		url:      endpoint.URL(cfg.BaseURL),
	}
	if err := c.renderExtraBody(); err != nil {
		return nil, err
	}
	return c, nil
}

// renderExtraBody renders Config.ExtraBody once: its members but
// stream_options as `,"key":value` in key order, and the stream_options
// object streamed requests send.
func (c *Client) renderExtraBody() error {
	raw, err := json.Marshal(c.cfg.ExtraBody)
	if err != nil {
		return fmt.Errorf("client: extra body: %w", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return fmt.Errorf("client: extra body: %w", err)
	}
	reserved := []string{"model", "stream", c.endpoint.Reserved}
	for _, k := range reserved {
		if _, ok := members[k]; ok {
			return fmt.Errorf("client: extra body sets %q, which the client always sends itself (set the model, or NoStream, in the client's own configuration)", k)
		}
	}
	if err := c.readLimits(members); err != nil {
		return err
	}
	opts := map[string]json.RawMessage{}
	if o, ok := members["stream_options"]; ok {
		delete(members, "stream_options")
		if err := json.Unmarshal(o, &opts); err != nil || opts == nil {
			return fmt.Errorf("client: extra body: stream_options is not an object: %s", o)
		}
	}
	if c.cfg.IncludeUsage && c.asksUsage() {
		opts["include_usage"] = json.RawMessage("true")
	}
	if len(opts) > 0 && !c.cfg.NoStream {
		c.streamOptions, _ = json.Marshal(opts) // sorted keys, raw values
	}
	for _, k := range slices.Sorted(maps.Keys(members)) {
		key, _ := json.Marshal(k)
		m := append(append(append([]byte{','}, key...), ':'), members[k]...)
		c.extraBody = append(c.extraBody, extraMember{key: k, member: m})
		c.extraLen += len(m)
	}
	return nil
}

// checkHeaders refuses header names and values net/http would refuse at
// every request.
func checkHeaders(h map[string]string) error {
	for k, v := range h {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool {
			return r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
		}) {
			return fmt.Errorf("client: header name %q is not a valid HTTP token", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("client: header %s: value holds a line break or NUL", k)
		}
	}
	return nil
}

// NewHTTPClient returns an HTTP client on the transport a Client builds for
// itself (internal/httppolicy: no proxy from the environment, no redirect
// followed, no compression, HTTP/1.1, a dial timeout), each request bounded
// by timeout (0 = none): for what llmbench sends an engine outside a
// Client, such as calibration, so that it reaches the engine the way the
// measured requests do.
func NewHTTPClient(timeout time.Duration) *http.Client { return httppolicy.Client(timeout) }

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
			setHeaders(req, c.cfg.Headers)
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
		we := &WarmError{URL: c.models, Want: n, Err: err}
		for _, e := range errs {
			switch {
			case e == nil:
				we.Opened++
			case we.First == nil:
				we.First = e
			}
			if e != nil && !nothingListened(e) {
				we.Accepted = true
			}
		}
		we.Accepted = we.Accepted || we.Opened > 0
		return we
	}
	return nil
}

// WarmError is Warm's error when not every connection opened: how many
// did, and whether the engine accepted a connection at all (one answered,
// or broke after the dial: a reset, an EOF, as an engine restarting or
// dropping connections does) rather than every failure being at the dial
// (nothing listening there).
type WarmError struct {
	URL          string
	Want, Opened int
	Accepted     bool
	First        error // the first failure, for a one-line account
	Err          error // every failure
}

func (e *WarmError) Error() string {
	return fmt.Sprintf("client: warm %d connections to %s: %v", e.Want, redact.URL(e.URL), e.Err)
}

func (e *WarmError) Unwrap() error { return e.Err }

// nothingListened reports whether err says no engine took the connection:
// it failed while dialing, and not by a reset. A dial reset is a
// connection the engine's listening socket had taken and then dropped
// unaccepted: the engine closed it to restart, between the handshake and
// the moment the dialer looked (seen under -race beside two CPU hogs:
// "dial tcp …: connect: connection reset by peer" on all four dials of a
// warm-up, and the run failed as if nothing listened).
func nothingListened(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "dial" && !errors.Is(err, syscall.ECONNRESET)
}

// Close closes the idle connections, those of an injected Config.HTTPClient
// included. Requests in flight are not affected.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// since is the run clock.
func (c *Client) since() time.Duration { return time.Since(c.cfg.Start) }
