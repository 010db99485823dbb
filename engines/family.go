// Package engines is the registry of engine families: one file per family
// (sglang.go, vllm.go, …) says everything llmbench knows about that engine
// apart from how its metrics map onto concepts, which is scrape's dialect
// file of the same name. Every other package reads this registry instead of
// keeping a table of its own, and an unknown name is an error wherever one
// is read, never a silent fallback.
//
// It imports nothing of the module: scenarios, client, calibrate, scrape,
// report/reconcile, engine/launch, engine/sim and run all read it.
package engines

// Family is one engine family. Every field is filled for every registered
// family (Check says which is missing); Launch alone may be nil, where
// llmbench cannot start the engine itself.
type Family struct {
	// Name is the family's key: a scenario's engine.dialect and
	// engine.launch.kind, the client's and calibration's Dialect, the name
	// scrape's dialect file registers its metric mapping under, and what
	// run.json records.
	Name string
	// Display is how prose names the engine ("SGLang").
	Display string
	// IDs are the request ids the engine joins on.
	IDs IDs
	// Tokenize is the tokenizer APIs calibration tries, in order: the
	// family's own first, then those a gateway in front of it might serve.
	Tokenize []TokenizeAPI
	// Lengths says how the engine is made to generate exactly max_tokens.
	Lengths Lengths
	// Launch is how llmbench starts the engine; nil when it cannot.
	Launch *Launch
	// Reconcile is what comparing the engine's metrics with the client's
	// figures must know about them.
	Reconcile Reconcile
	// Wire is how the engine's HTTP differs from a plain OpenAI server.
	Wire Wire
	// Context is where the engine states the context one request may fill
	// (prompt + output); zero where it states none that llmbench reads.
	Context ContextAPI
	// CacheReset is how the engine's prefix cache is emptied before a phase
	// that starts cold (cachereset.go); "" where it offers no way.
	CacheReset CacheResetAPI
	// Sim: the built-in engine (engine/sim) speaks this family's metrics,
	// ids and tokenizer endpoints, so a scenario of kind sim may name it.
	Sim bool
}

// IDs are the ids a request carries to the engine and back.
type IDs struct {
	// BodyField is the request body member that carries llmbench's request
	// id, "" where the engine reads none from the body (the X-Request-Id
	// header is sent to every engine). IDsChecked records that "" is meant.
	BodyField string
	// Echo says which id the engine's answers and traces carry, for the
	// join of its traces with the client's records: "{id}" is the id sent.
	Echo string
}

// TokenizeAPI is one shape of tokenizer endpoint; calibration implements
// each (calibrate/methods.go).
type TokenizeAPI string

// The tokenizer APIs calibration knows.
const (
	// TokenizeLlamaCpp: POST /tokenize {"content", "add_special"} and POST
	// /apply-template {"messages"} → {"prompt"} (the chat template).
	TokenizeLlamaCpp TokenizeAPI = "llama.cpp"
	// TokenizeVLLM: POST /tokenize {"model", "messages"|"prompt"} →
	// {"count", "tokens"}, the chat template applied for messages (vLLM,
	// SGLang, also at /v1/tokenize).
	TokenizeVLLM TokenizeAPI = "vLLM/SGLang"
	// TokenizeTGI: POST /chat_tokenize {"model", "messages"} and POST
	// /tokenize {"inputs"} → [tokens].
	TokenizeTGI TokenizeAPI = "TGI"
)

// TokenizeAPIs lists every tokenizer API, in the order tried when the
// engine's family is unknown (an undetected dialect).
var TokenizeAPIs = []TokenizeAPI{TokenizeLlamaCpp, TokenizeVLLM, TokenizeTGI}

// Lengths is how an engine is told to generate exactly max_tokens.
type Lengths struct {
	// MinTokens: the engine takes min_tokens beside ignore_eos (vLLM's and
	// SGLang's sampling parameters), so asking for both makes the length
	// exact. Otherwise ignore_eos goes alone (an unknown field may be refused).
	MinTokens bool
	// How says it in words, for the family's reader and `llmbench` notes.
	How string
}

// ContextAPI is where an engine states its per-request context: a GET of
// Path (from the server's origin) answering JSON, and the member at Field,
// a dotted path in which an array stands for its first element.
type ContextAPI struct {
	Path  string
	Field string
	// What says what the number is, for the run's notes.
	What string
}

// Launch is how llmbench starts the engine (engine/launch).
type Launch struct {
	// Argv is the default command line. Placeholders: {model}, {host},
	// {port}, {metrics_port}.
	Argv []string
	// ReadyPath answers 200 once the engine serves requests.
	ReadyPath string
	// MetricsPort: /metrics is served on a port of its own ({metrics_port}).
	MetricsPort bool
}

// Reconcile is what report/reconcile must know about the family's metrics
// to compare them with the client fairly (engine-metrics.md §6).
type Reconcile struct {
	// ITLCountsTokens: the ITL histogram's count is tokens, each chunk
	// adding its token count to the bucket of its per-token interval
	// (SGLang), so its mean is per token. Otherwise there is one observation
	// per chunk (per engine step per request: vLLM, FastDeploy), and its
	// mean is per chunk.
	ITLCountsTokens bool
	// LoggedGauges: scheduler gauges are written only at a prefill batch and
	// every DecodeLogInterval decode steps (SGLang), so scrapes re-read old
	// values and the gauges freeze when the load stops.
	LoggedGauges      bool
	DecodeLogInterval int
	// TTFTSpan says what the engine's TTFT covers, for the decomposition verdict.
	TTFTSpan string
	// OutsideTTFT names what lies between the engine's TTFT and the client's.
	OutsideTTFT string
	// TokensAtFinish: the token counters grow only when a request finishes
	// (SGLang). Otherwise (vLLM at the first token and per step, FastDeploy
	// per step) a window's counter deltas include part of the tokens of the
	// requests in flight at its edges.
	TokensAtFinish bool
	// PromptComputedOnly: the prompt-token counter counts only the prompt
	// tokens the engine processed, not those it reused from its prompt
	// cache (llama.cpp), so it falls short of the usage by the cached tokens.
	PromptComputedOnly bool
	// TimeResolution is what each request's time is truncated to before the
	// engine adds it to its cumulative time counters (decode_seconds,
	// prefill_seconds): llama.cpp keeps whole milliseconds. 0 = exact.
	TimeResolution float64
	// SlotTimeCounters: prefill_seconds and decode_seconds add up each
	// request's whole time in a slot (llama.cpp: prompt time from the slot
	// starting the prompt to the first token, generation time from there to
	// the last, when the slot is released), so their increase is Little's
	// law's sum of the time the engine ran the requests.
	SlotTimeCounters bool
	// PrefillSpan says what the engine's prefill time covers, and
	// OutsidePrefill what lies between it and the client's TTFT, for an
	// engine whose TTFT is known only through its prefill-time counter.
	PrefillSpan, OutsidePrefill string
	// AbandonedNotFinished: a request the client walks away from (a
	// timeout, a broken stream: the engine sees the connection close) is
	// aborted, never counted as finished (vLLM's output processor drops it
	// without the per-request stats, so request_success_total leaves it
	// out; SGLang counts it in num_aborted_requests_total instead). So the
	// engine's finished requests of ours are exactly the client's successes,
	// and its finished counter counts foreign requests exactly. Otherwise
	// the engine may still complete a request the client gave up on, and
	// the count is a lower bound.
	AbandonedNotFinished bool
	// KVNote is what a reader must know about the engine's KV-usage gauge
	// ("" = nothing).
	KVNote string
}

// NeutralReconcile is the reconciliation of an engine nothing special is
// known about (one ITL observation per chunk, gauges taken as live), and of
// a run whose engine was never identified.
var NeutralReconcile = Reconcile{
	TTFTSpan:       "the engine's own TTFT",
	OutsideTTFT:    "whatever lies between the engine's measuring point and the client",
	PrefillSpan:    "the engine's own prefill time",
	OutsidePrefill: "the queue and whatever lies between the engine's prefill and the client",
}

// Wire is how the engine's HTTP behaves where it matters to a client.
type Wire struct {
	// Quirks lists what else a client or a report meets, in words ("none"
	// when nothing): e.g. FastDeploy's TTFT buckets ending at 1 s.
	Quirks []string
}
