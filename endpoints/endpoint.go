// Package endpoints is the registry of the generation endpoints llmbench
// sends requests to (one entry per endpoint: chat.go, completions.go,
// messages.go).
// Every component reads its endpoint here: the client builds the request
// its Kind says, the calibration counts the prompt the way the endpoint
// sends it, the built-in engine serves it, scrape counts it in the engine's
// request counters, and scenario validation accepts its name. An unknown
// name is an error wherever one is read.
//
// It imports nothing of the module, so every package may read it.
package endpoints

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kind is an endpoint's wire shape. Each consumer implements every kind
// (the registry test checks it); a new endpoint of an existing kind is one
// entry, a new kind is code in each consumer.
type Kind string

// The kinds.
const (
	// KindChat: the body carries "messages" and the engine applies its
	// chat template; answers' choices carry delta (streamed) or message.
	KindChat Kind = "chat"
	// KindCompletion: the body carries "prompt", the messages' contents
	// joined by newlines, with no template; choices carry text.
	KindCompletion Kind = "completion"
	// KindResponses: OpenAI's Responses API (responses.go): the body
	// carries "input" and the chat template applies; a stream is typed
	// events with no [DONE].
	KindResponses Kind = "responses"
	// KindMessages: Anthropic's Messages API: the body carries "messages"
	// (a system message as "system") and max_tokens, and the engine applies
	// its chat template; answers are typed events or a message object
	// with content blocks (decision 1300).
	KindMessages Kind = "messages"
	// KindEmbeddings and KindRerank are the pooling kinds (pooling.go):
	// answered whole, never streamed, generating nothing.
	KindEmbeddings Kind = "embeddings"
	KindRerank     Kind = "rerank"
)

// Kinds lists every kind.
var Kinds = []Kind{KindChat, KindCompletion, KindResponses, KindMessages, KindEmbeddings, KindRerank}

// APIRoot is the OpenAI-compatible API's root path on an engine: a
// client's BaseURL ends with it, and engines' metrics label requests with
// APIRoot+Path.
const APIRoot = "/v1"

// Endpoint is one generation endpoint.
type Endpoint struct {
	// Name is the key: a scenario's request.endpoint and the client's and
	// calibration's Config.Endpoint.
	Name string
	// Path is where it answers under the API root, e.g. "/chat/completions".
	Path string
	// Kind is its wire shape: the request the client builds, the answer
	// the built-in engine writes, how calibration counts its prompt.
	Kind Kind
	// Reserved is the body member the request's input goes in ("messages",
	// "prompt"): a scenario's or client's extra body may not set it.
	Reserved string
	// Keeps says what a record keeps of its answers, in words (every kind's
	// stream goes through the client's one chunk decoder, which reads
	// delta, message and text alike, so nothing per chunk depends on it).
	Keeps string
	// AtServerRoot: Path is under the server's root, not the API root
	// (TEI's /rerank): the client posts to the base URL less its /v1.
	AtServerRoot bool
}

// ServerPath is the path the engine serves it at and labels its requests
// with (vLLM's http_requests_total{handler}).
func (e Endpoint) ServerPath() string {
	if e.AtServerRoot {
		return e.Path
	}
	return APIRoot + e.Path
}

// URL is where a client whose API root is base posts to it (base's query
// kept, see URL).
func (e Endpoint) URL(base string) string {
	if e.AtServerRoot {
		return URL(ServerRoot(base), e.Path)
	}
	return URL(base, e.Path)
}

// Template reports whether the engine applies its chat template to the
// request's messages (what calibration measures).
func (e Endpoint) Template() bool {
	return e.Kind == KindChat || e.Kind == KindResponses || e.Kind == KindMessages
}

// builtin is the endpoints llmbench ships; the first is the default.
var builtin = []Endpoint{chat, completions, responses, messages, embeddings, rerank, teiRerank}

// The built-in endpoints' names and paths.
const (
	Chat            = "chat"
	ChatPath        = "/chat/completions"
	Completions     = "completions"
	CompletionsPath = "/completions"
	// Default is the endpoint a request goes to when none is named.
	Default = Chat
)

var registry struct {
	sync.RWMutex
	endpoints []Endpoint
}

func init() {
	for _, e := range builtin {
		if err := Check(e); err != nil {
			panic(err)
		}
	}
	registry.endpoints = slices.Clone(builtin)
}

// All returns every registered endpoint; the slice is the caller's.
func All() []Endpoint {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.endpoints)
}

// Names returns the registered endpoints' names.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, len(registry.endpoints))
	for i, e := range registry.endpoints {
		names[i] = e.Name
	}
	return names
}

// Lookup returns the endpoint named name ("" is Default), or an error that
// names every registered endpoint.
func Lookup(name string) (Endpoint, error) {
	if name == "" {
		name = Default
	}
	registry.RLock()
	defer registry.RUnlock()
	for _, e := range registry.endpoints {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(registry.endpoints))
	for i, e := range registry.endpoints {
		names[i] = e.Name
	}
	return Endpoint{}, fmt.Errorf("unknown endpoint %q (known: %s)", name, strings.Join(names, ", "))
}

// IsServerPath reports whether path is a registered endpoint's ServerPath:
// a request an engine's counter labels with it is one of llmbench's kinds.
func IsServerPath(path string) bool {
	registry.RLock()
	defer registry.RUnlock()
	for _, e := range registry.endpoints {
		if e.ServerPath() == path {
			return true
		}
	}
	return false
}

// Register adds e, for an endpoint built outside this package (a test's,
// a fork's), and returns the function that removes it again. e must pass
// Check, and its name and path must be new.
func Register(e Endpoint) (unregister func(), err error) {
	if err := Check(e); err != nil {
		return nil, err
	}
	registry.Lock()
	defer registry.Unlock()
	for _, o := range registry.endpoints {
		if o.Name == e.Name || o.ServerPath() == e.ServerPath() {
			return nil, fmt.Errorf("endpoints: %q at %s: name or path already registered", e.Name, e.Path)
		}
	}
	registry.endpoints = append(slices.Clip(registry.endpoints), e)
	return func() {
		registry.Lock()
		defer registry.Unlock()
		registry.endpoints = slices.DeleteFunc(slices.Clone(registry.endpoints), func(o Endpoint) bool { return o.Name == e.Name })
	}, nil
}

// Check returns every field e leaves empty or malformed, or nil.
func Check(e Endpoint) error {
	var errs []error
	if e.Name == "" || strings.ContainsAny(e.Name, " \t\n/") {
		errs = append(errs, fmt.Errorf("name %q: want a key without spaces or slashes", e.Name))
	}
	if !strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, APIRoot+"/") {
		errs = append(errs, fmt.Errorf("path %q: want an absolute path under the API root, without %s", e.Path, APIRoot))
	}
	if !slices.Contains(Kinds, e.Kind) {
		errs = append(errs, fmt.Errorf("kind %q: want one of %v", e.Kind, Kinds))
	}
	if e.Reserved == "" {
		errs = append(errs, errors.New("reserved: missing"))
	}
	if e.Keeps == "" {
		errs = append(errs, errors.New("keeps: missing"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("endpoints: endpoint %q: %w", e.Name, err)
	}
	return nil
}
