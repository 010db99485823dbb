// Package calibrate measures, on the engine itself and before the measured
// phase, how many prompt tokens the engine counts for a request beyond the
// words of its messages: the chat template's overhead per request and per
// message, and the tokens per word of the synthetic prompts' vocabulary
// (decision note 0406). workload.Plan.WithFit(result.Fit()) then shortens
// the synthetic prompts so that the engine counts each request's planned
// PromptTokens; Count asks the engine's tokenizer for the length of real
// text (file datasets).
//
// Methods, each tried only where it answers (a 404 moves on, and the notes
// say so):
//   - apply_template (llama.cpp): POST {root}/apply-template, then
//     POST {root}/tokenize of the templated prompt;
//   - tokenize (vLLM, SGLang: POST {root}/tokenize or {root}/v1/tokenize
//     with messages or a prompt; TGI: POST {root}/chat_tokenize and
//     {root}/tokenize);
//   - probe: a few real requests with max_tokens 1, reading
//     usage.prompt_tokens (any OpenAI-compatible server).
//
// {root} is the server root: Config.BaseURL without its /v1.
package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/workload"
)

// The built-in endpoints Config.Endpoint accepts (package endpoints owns
// them, and lists any other registered one).
const (
	EndpointChat        = endpoints.Chat        // POST {BaseURL}/chat/completions: the chat template applies
	EndpointCompletions = endpoints.Completions // POST {BaseURL}/completions: the messages joined by newlines, no template
)

// Methods of Result.Method.
const (
	MethodTokenize      = "tokenize"       // the engine's tokenizer endpoint counted
	MethodApplyTemplate = "apply_template" // llama.cpp rendered the template, its tokenizer counted
	MethodProbe         = "probe"          // real requests' usage.prompt_tokens
	MethodNone          = "none"           // nothing answered
)

// Config says where the engine is and how requests will be sent to it.
type Config struct {
	BaseURL string // the API root, e.g. http://host:8000/v1
	Model   string
	// Dialect is the engine family (package engines), whose tokenizer APIs
	// are tried first; "" or "auto" = unknown (every API is tried).
	Dialect  string
	APIKey   string // sent as a bearer token when not empty
	Endpoint string // a registered endpoint's name (package endpoints); "" = EndpointChat
	// HTTPClient sends the calibration requests; nil = one on the client's
	// transport (client.NewHTTPClient) with a 60 s timeout per request.
	HTTPClient *http.Client

	ep       endpoints.Endpoint    // Endpoint, resolved by validate
	tokenize []engines.TokenizeAPI // Dialect's tokenizer APIs, by validate
}

// Observation is one calibration request and what the engine counted.
type Observation struct {
	Shape    string `json:"shape"`    // e.g. "user 16 + assistant 16 + user 16"
	Messages int    `json:"messages"` // messages in the request
	Words    int    `json:"words"`    // vocabulary words in them
	Counted  int    `json:"counted"`  // prompt tokens the engine counts for the request
	// Bare is what the tokenizer counts for the messages' texts alone, each
	// tokenized on its own and summed (-1: not measured, probe method).
	Bare int `json:"bare"`
	// Overhead is Counted less the words' tokens: what the template adds.
	Overhead float64 `json:"overhead"`
}

// Result is what calibration found.
type Result struct {
	Method   string `json:"method"`   // a Method* constant
	Endpoint string `json:"endpoint"` // the endpoint calibrated: chat or completions
	Source   string `json:"source"`   // the endpoints that answered
	// TemplateTokens is what the engine adds to a request of one user
	// message: RequestTokens + MessageTokens.
	TemplateTokens int `json:"template_tokens"`
	// RequestTokens are added once per request, MessageTokens per message;
	// MessagesMeasured says whether requests of several messages were
	// measured (otherwise MessageTokens is 0 and the whole overhead is
	// counted per request).
	RequestTokens    int  `json:"request_tokens"`
	MessageTokens    int  `json:"message_tokens"`
	MessagesMeasured bool `json:"messages_measured"`
	// RoleTokens replace MessageTokens for a role the template treats
	// differently (measured: system).
	RoleTokens map[string]int `json:"role_tokens,omitempty"`
	// TokensPerWord is what the engine counts per word of the synthetic
	// prompts' vocabulary (1 when every word is one token).
	TokensPerWord float64       `json:"tokens_per_word"`
	Evidence      []Observation `json:"evidence"`
	Notes         []string      `json:"notes"`
	// Images is what the engine charged an image of each size the run's
	// requests carry (ProbeImages); absent without images.
	Images []ImageObservation `json:"images,omitempty"`
}

// Fit is the result as the workload's fitting takes it (zero for MethodNone).
func (r Result) Fit() workload.Fit {
	if r.Method == MethodNone || r.Method == "" {
		return workload.Fit{}
	}
	f := workload.Fit{RequestTokens: r.RequestTokens, MessageTokens: r.MessageTokens, TokensPerWord: r.TokensPerWord}
	if r.TokensPerWord == 1 {
		f.TokensPerWord = 0
	}
	if len(r.RoleTokens) > 0 {
		f.RoleTokens = make(map[string]int, len(r.RoleTokens))
		for k, v := range r.RoleTokens {
			f.RoleTokens[k] = v
		}
	}
	return f
}

// String is a one-line summary for logs and reports.
func (r Result) String() string {
	if r.Method == MethodNone {
		return "none (" + strings.Join(r.Notes, "; ") + ")"
	}
	s := fmt.Sprintf("by %s (%s): the engine adds %d tokens to a one-message request (%d per request + %d per message",
		r.Method, r.Endpoint, r.TemplateTokens, r.RequestTokens, r.MessageTokens)
	if v, ok := r.RoleTokens["system"]; ok {
		s += fmt.Sprintf(", %d per system message", v)
	}
	s += fmt.Sprintf("), %.4g token(s) per word", r.TokensPerWord)
	return s
}

func (cfg Config) validate() (Config, error) {
	if cfg.BaseURL == "" {
		return cfg, errors.New("calibrate: no BaseURL")
	}
	ep, err := endpoints.Lookup(cfg.Endpoint)
	if err != nil {
		return cfg, fmt.Errorf("calibrate: %w", err)
	}
	switch ep.Kind { // the kinds the counters count
	case endpoints.KindChat, endpoints.KindCompletion, endpoints.KindResponses, endpoints.KindMessages:
	case endpoints.KindEmbeddings, endpoints.KindRerank: // pooling.go: nothing to fit
	default:
		return cfg, fmt.Errorf("calibrate: endpoint %q: no way to count a request of kind %q", ep.Name, ep.Kind)
	}
	cfg.Endpoint, cfg.ep = ep.Name, ep
	switch cfg.Dialect {
	case "", "auto": // an undetected engine: every API, in the unknown engine's order
		cfg.tokenize = engines.TokenizeAPIs
	default:
		f, err := engines.Lookup(cfg.Dialect)
		if err != nil {
			return cfg, fmt.Errorf("calibrate: %w", err)
		}
		cfg.tokenize = f.Tokenize
	}
	return cfg, nil
}

// shape is one calibration request.
type shape struct {
	name     string
	msgs     []workload.Message
	required bool // without it the method cannot calibrate
}

// The calibration texts: vocabulary words, as the plan's prompts are.
const (
	shortWords = 16
	longWords  = 64
)

func text(key uint64, n int) string { return workload.VocabularyText(key, n) }

func shapes() []shape {
	a, b := text(1, shortWords), text(2, longWords)
	c, d, e := text(3, shortWords), text(4, shortWords), text(5, shortWords)
	return []shape{
		{name: "user 16", required: true, msgs: []workload.Message{{Role: "user", Content: a}}},
		{name: "user 64", required: true, msgs: []workload.Message{{Role: "user", Content: b}}},
		{name: "system 16 + user 16", msgs: []workload.Message{{Role: "system", Content: c}, {Role: "user", Content: a}}},
		{name: "user 16 + assistant 16 + user 16", msgs: []workload.Message{{Role: "user", Content: a}, {Role: "assistant", Content: d}, {Role: "user", Content: e}}},
	}
}

// Probe measures the engine's prompt token overhead with the first method
// that answers: the engine's template and tokenizer endpoints, else probe
// requests. It sends at most a dozen small requests (the probe method: four
// chat or completion requests with max_tokens 1, which the engine's own
// counters will include: probe before the measured phase). When nothing
// answers, the Result's Method is MethodNone, its Notes say why, and the
// error is not nil; the run can go on unfitted.
func Probe(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return Result{Method: MethodNone, Notes: []string{err.Error()}}, err
	}
	if cfg.ep.Pooling() {
		return poolingResult(cfg), nil // pooling.go
	}
	p := newPoster(cfg)
	res := Result{Method: MethodNone, Endpoint: cfg.Endpoint}
	_, base := roots(cfg.BaseURL)
	cands := asSent(cfg, append(counters(cfg, p), newProbe(cfg, p, base)))
	for _, c := range cands {
		r, err := measure(ctx, c)
		if err == nil {
			r.Endpoint = cfg.Endpoint
			r.Notes = append(res.Notes, r.Notes...)
			return r, nil
		}
		if ctx.Err() != nil {
			res.Notes = append(res.Notes, "cancelled: "+ctx.Err().Error())
			return res, ctx.Err()
		}
		res.Notes = append(res.Notes, skipNote(c, err))
	}
	return res, fmt.Errorf("calibrate: no method answered: %s", strings.Join(res.Notes, "; "))
}

// skipNote says why a method was passed over.
func skipNote(c *counter, err error) string {
	what := fmt.Sprintf("%s (%s)", c.method, c.family)
	switch {
	case notServed(err):
		return fmt.Sprintf("%s: not served (%v), moved on", what, err)
	case errors.Is(err, errShape):
		return fmt.Sprintf("%s: another engine answered there (%v), moved on", what, err)
	case refused(err):
		return fmt.Sprintf("%s: refused (%v), moved on", what, err)
	}
	return fmt.Sprintf("%s: failed (%v), moved on", what, err)
}

// measure calibrates with one counter: every shape, the bare texts, and
// the arithmetic.
func measure(ctx context.Context, c *counter) (Result, error) {
	res := Result{Method: c.method, Source: c.source}
	shs := shapes()
	counted := make([]int, len(shs))
	ok := make([]bool, len(shs))
	for i, sh := range shs {
		n, err := c.request(ctx, sh.msgs)
		if err != nil {
			if sh.required || ctx.Err() != nil {
				return Result{}, err
			}
			res.Notes = append(res.Notes, fmt.Sprintf("shape %q not measured: %v", sh.name, err))
			continue
		}
		counted[i], ok[i] = n, true
	}

	// Words' tokens: from the tokenizer's bare counts where there is one,
	// else from the slope of the two one-message requests.
	tpw := float64(counted[1]-counted[0]) / (longWords - shortWords)
	wordTokens := func(sh shape) (float64, int) {
		return tpw * float64(workload.CountTokens(sh.msgs)), -1
	}
	if c.bare != nil {
		bare := map[string]int{}
		for _, sh := range shs {
			for _, m := range sh.msgs {
				if _, done := bare[m.Content]; done {
					continue
				}
				n, err := c.bare(ctx, m.Content)
				if err != nil {
					return Result{}, fmt.Errorf("bare count: %w", err)
				}
				bare[m.Content] = n
			}
		}
		a, b := bare[shs[0].msgs[0].Content], bare[shs[1].msgs[0].Content]
		tpw = float64(b-a) / (longWords - shortWords)
		// A tokenizer that adds special tokens (BOS) to every text it
		// counts: the constant is measured and taken off each text.
		special := int(math.Round(float64(a) - tpw*shortWords))
		if special != 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the tokenizer adds %d special tokens to a bare text; taken off each text's count", special))
		}
		wordTokens = func(sh shape) (float64, int) {
			sum := 0
			for _, m := range sh.msgs {
				sum += bare[m.Content] - special
			}
			return float64(sum), sum
		}
	}
	if math.Abs(tpw-1) < 1e-9 {
		tpw = 1
	}
	res.TokensPerWord = tpw
	if tpw != 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("the vocabulary is not one token per word on this engine: %.4g tokens per word (%d words → %d tokens, %d → %d); fitting divides by it and is exact only on average",
			tpw, shortWords, counted[0], longWords, counted[1]))
	}
	if tpw <= 0 {
		return Result{}, fmt.Errorf("%s: %d words counted %d tokens and %d words %d: not a tokenizer's count", c.source, shortWords, counted[0], longWords, counted[1])
	}

	over := make([]float64, len(shs))
	for i, sh := range shs {
		if !ok[i] {
			continue
		}
		w, bare := wordTokens(sh)
		over[i] = float64(counted[i]) - w
		res.Evidence = append(res.Evidence, Observation{Shape: sh.name, Messages: len(sh.msgs), Words: workload.CountTokens(sh.msgs),
			Counted: counted[i], Bare: bare, Overhead: over[i]})
	}
	round := func(v float64, what string) int {
		r := math.Round(v)
		if math.Abs(v-r) > 0.25 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s is %.2f tokens, rounded to %d", what, v, int(r)))
		}
		return int(r)
	}
	res.TemplateTokens = round(over[0], "the one-message overhead")
	if c.bare != nil && math.Abs(over[1]-over[0]) >= 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("the overhead differs with the message's length (%.4g with %d words, %.4g with %d): the tokenizer joins words across the template's edges",
			over[0], shortWords, over[1], longWords))
	}
	switch {
	case ok[3]:
		res.MessagesMeasured = true
		res.MessageTokens = round((over[3]-over[0])/2, "the per-message overhead (user and assistant)")
		if ok[2] {
			if sys := round(over[2]-over[0], "the system message's overhead"); sys != res.MessageTokens {
				res.RoleTokens = map[string]int{"system": sys}
				res.Notes = append(res.Notes, fmt.Sprintf("a system message adds %d tokens, a user or assistant message %d", sys, res.MessageTokens))
			}
		}
	case ok[2]:
		res.MessagesMeasured = true
		res.MessageTokens = round(over[2]-over[0], "the per-message overhead (system)")
		res.Notes = append(res.Notes, "user/assistant turns not measured: every message is taken to add what a system message adds")
	default:
		res.Notes = append(res.Notes, "requests of several messages not measured: the whole overhead is counted once per request, so requests of several messages will count above their target")
	}
	res.RequestTokens = res.TemplateTokens - res.MessageTokens
	return res, nil
}
