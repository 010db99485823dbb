package endpoints

import "testing"

func TestPoolingEndpoints(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, serverPath, reserved, url string
		kind                            Kind
		texts                           int // of 4 inputs
	}{
		{Embeddings, "/v1/embeddings", "input", "http://h:8/v1/embeddings?api-version=2", KindEmbeddings, 4},
		{Rerank, "/v1/rerank", "documents", "http://h:8/v1/rerank?api-version=2", KindRerank, 5},
		{TEIRerank, "/rerank", "texts", "http://h:8/rerank?api-version=2", KindRerank, 5},
	} {
		e, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if e.ServerPath() != c.serverPath || e.Kind != c.kind || e.Reserved != c.reserved || !e.Pooling() || e.Template() || !IsServerPath(c.serverPath) {
			t.Errorf("%s = %+v, server path %s", c.name, e, e.ServerPath())
		}
		if got := e.URL("http://h:8/v1?api-version=2"); got != c.url {
			t.Errorf("%s: URL = %s, want %s", c.name, got, c.url)
		}
		if got := e.Texts(4); got != c.texts {
			t.Errorf("%s: Texts(4) = %d, want %d", c.name, got, c.texts)
		}
	}
	for _, name := range []string{Chat, Completions} {
		if e, _ := Lookup(name); e.Pooling() || e.Texts(1) != 1 {
			t.Errorf("%s: a generation endpoint taken for a pooling one", name)
		}
	}
}

// TestRegisterServerPath is not parallel: it changes the registry. Two
// endpoints may share a Path when one is at the server's root (rerank and
// TEI's rerank), never a ServerPath.
func TestRegisterServerPath(t *testing.T) {
	if _, err := Register(Endpoint{Name: "other-tei", Path: RerankPath, AtServerRoot: true, Kind: KindRerank, Reserved: "texts", Keeps: "k"}); err == nil {
		t.Error("a second endpoint at the server path /rerank was registered")
	}
	undo, err := Register(Endpoint{Name: "root-embed", Path: EmbeddingsPath, AtServerRoot: true, Kind: KindEmbeddings, Reserved: "input", Keeps: "k"})
	if err != nil {
		t.Fatalf("/embeddings at the server's root beside /v1/embeddings: %v", err)
	}
	defer undo()
	if !IsServerPath("/embeddings") || !IsServerPath("/v1/embeddings") {
		t.Error("both server paths should be counted")
	}
}
