package endpoints

// The pooling endpoints: the engine reads its inputs in one prefill and
// answers once, with vectors or scores and no generated token, so none of
// them streams and TTFT, ITL and TPOT do not apply to them (decision 1400).
const (
	Embeddings     = "embeddings"
	EmbeddingsPath = "/embeddings"
	Rerank         = "rerank"
	RerankPath     = "/rerank"
	// TEIRerank is Hugging Face text-embeddings-inference's rerank, at the
	// server's root: {query, texts}, answered by a bare array of
	// {index, score} without usage.
	TEIRerank = "tei-rerank"
)

// embeddings is OpenAI's embeddings (vLLM, SGLang, TEI, llama.cpp serve
// it): a batch of inputs, one vector each.
var embeddings = Endpoint{
	Name:     Embeddings,
	Path:     EmbeddingsPath,
	Kind:     KindEmbeddings,
	Reserved: "input",
	Keeps:    "how many inputs were sent and answered (data[]); usage.prompt_tokens (else total_tokens); no vector",
}

// rerank is the rerank API vLLM, Jina and Cohere share: a query and
// documents, answered by results of {index, relevance_score}.
var rerank = Endpoint{
	Name:     Rerank,
	Path:     RerankPath,
	Kind:     KindRerank,
	Reserved: "documents",
	Keeps:    "how many documents were sent and how many results came (results[], top_n); usage.prompt_tokens (else total_tokens); no score",
}

// teiRerank is TEI's rerank: the documents go as "texts" (the endpoint's
// Reserved member: the one difference in the request), and the answer is
// a bare array of {index, score}.
var teiRerank = Endpoint{
	Name:         TEIRerank,
	Path:         RerankPath,
	AtServerRoot: true,
	Kind:         KindRerank,
	Reserved:     "texts",
	Keeps:        "how many texts were sent and how many ranks came (a bare array); TEI sends no usage: no token count",
}

// Pooling reports whether the endpoint is of a pooling kind: never
// streamed, nothing generated, its request a batch of inputs.
func (e Endpoint) Pooling() bool { return e.Kind == KindEmbeddings || e.Kind == KindRerank }

// Texts is how many texts a request of n inputs carries: n for a generation
// endpoint's messages and for embeddings, n documents and the query for
// rerank.
func (e Endpoint) Texts(n int) int {
	if e.Kind == KindRerank {
		return n + 1
	}
	return n
}
