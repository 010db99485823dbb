package endpoints

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	if got := Names(); !slices.Equal(got, []string{Chat, Completions, Responses, Messages, Embeddings, Rerank, TEIRerank}) {
		t.Errorf("Names() = %v", got)
	}
	for _, c := range []struct {
		name, path, reserved string
		kind                 Kind
		template             bool
	}{
		{"", "/v1/chat/completions", "messages", KindChat, true}, // "" is the default
		{Chat, "/v1/chat/completions", "messages", KindChat, true},
		{Completions, "/v1/completions", "prompt", KindCompletion, false},
		{Responses, "/v1/responses", "input", KindResponses, true}, // the chat template applies to its input
		{Messages, "/v1/messages", "messages", KindMessages, true},
	} {
		e, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(e); err != nil {
			t.Error(err)
		}
		if e.ServerPath() != c.path || e.Kind != c.kind || e.Reserved != c.reserved || e.Template() != c.template || !IsServerPath(c.path) {
			t.Errorf("Lookup(%q) = %+v, server path %s", c.name, e, e.ServerPath())
		}
	}
	if IsServerPath("/v1/models") || IsServerPath("/chat/completions") {
		t.Error("IsServerPath takes a path no endpoint serves")
	}
	if _, err := Lookup("nonesuch"); err == nil || !strings.Contains(err.Error(), "chat, completions, responses, messages") {
		t.Errorf("Lookup(nonesuch) = %v, want an error naming the known", err)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	ok := Endpoint{Name: "x", Path: "/x", Kind: KindChat, Reserved: "messages", Keeps: "k"}
	if err := Check(ok); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		change func(*Endpoint)
		want   string
	}{
		{"no name", func(e *Endpoint) { e.Name = "" }, "name"},
		{"slash in name", func(e *Endpoint) { e.Name = "a/b" }, "name"},
		{"relative path", func(e *Endpoint) { e.Path = "x" }, "path"},
		{"path with the API root", func(e *Endpoint) { e.Path = "/v1/x" }, "without /v1"},
		{"unknown kind", func(e *Endpoint) { e.Kind = "embedding" }, "kind"},
		{"no reserved member", func(e *Endpoint) { e.Reserved = "" }, "reserved"},
		{"keeps unsaid", func(e *Endpoint) { e.Keeps = "" }, "keeps"},
	} {
		e := ok
		tt.change(&e)
		if err := Check(e); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Check = %v, want an error about %s", tt.name, err, tt.want)
		}
	}
}

// TestRegister is not parallel: it changes the registry.
func TestRegister(t *testing.T) {
	e := Endpoint{Name: "fake", Path: "/fake", Kind: KindCompletion, Reserved: "prompt", Keeps: "k"}
	undo, err := Register(e)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Lookup("fake"); err != nil || got.Path != "/fake" || !IsServerPath("/v1/fake") {
		t.Errorf("registered: %+v, %v", got, err)
	}
	dup := e
	dup.Name = "other"
	if _, err := Register(dup); err == nil {
		t.Error("a second endpoint at the same path was registered")
	}
	undo()
	if _, err := Lookup("fake"); err == nil || IsServerPath("/v1/fake") {
		t.Error("unregistered, still there")
	}
	e.Kind = "embedding"
	if _, err := Register(e); err == nil {
		t.Error("an endpoint of an unknown kind was registered")
	}
}
