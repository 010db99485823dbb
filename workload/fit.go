package workload

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

// Fitting synthetic prompts to an engine's count (decision note 0406).
//
// A synthetic prompt carries one vocabulary word per planned token
// (text.go), which is exactly what the built-in engine counts without a chat
// template. A real engine (or the built-in one with its template knobs)
// counts more: the chat template adds tokens once per request (the
// generation prompt, BOS) and once per message (role markers), and a word may
// cost more than one token. Fit says how much, as measured on the engine
// (package calibrate), and FitRequest shortens a request's words so that the
// engine counts its planned PromptTokens:
//
//	counted = RequestTokens + messages × MessageTokens + words × TokensPerWord
//
// Which words go: every message gives up its own share of the template (its
// MessageTokens; the first message also the RequestTokens), keeping its
// leading words; a message too short to give up its share keeps one word and
// hands the rest on to the messages after it. So a message's fitted text
// depends on it and the messages before it only: shared prefixes (a group's
// system prompt) stay shared, trace blocks stay equal, and a multi-turn
// request's history is exactly the previous turn's fitted prompt. What the
// last message cannot absorb (a target below the template's cost and one
// word per message, or short messages at the end) is reported as the
// request's Off, never reached by cutting into earlier messages or dropping
// any.

// Fit is how an engine counts a request's prompt tokens beyond one token per
// vocabulary word. The zero value changes nothing.
type Fit struct {
	// RequestTokens are added once per request by the chat template (the
	// generation prompt, BOS, a default system prompt…).
	RequestTokens int `json:"request_tokens"`
	// MessageTokens are added per message (role markers, separators).
	MessageTokens int `json:"message_tokens"`
	// RoleTokens replace MessageTokens for messages of these roles, where a
	// template treats a role differently (Qwen's default system prompt is
	// replaced by a system message, which then adds less than a user one).
	RoleTokens map[string]int `json:"role_tokens,omitempty"`
	// TokensPerWord is what the engine counts per vocabulary word; 0 means
	// 1. When it is not 1, words are token targets divided by it, rounded,
	// and the engine's count is only expected, not exact.
	TokensPerWord float64 `json:"tokens_per_word,omitempty"`
}

// IsZero reports whether the fit changes nothing.
func (f Fit) IsZero() bool {
	for _, n := range f.RoleTokens {
		if n != 0 {
			return false
		}
	}
	return f.RequestTokens == 0 && f.MessageTokens == 0 && (f.TokensPerWord == 0 || f.TokensPerWord == 1)
}

func (f Fit) perWord() float64 {
	if f.TokensPerWord <= 0 {
		return 1
	}
	return f.TokensPerWord
}

// PerMessage is what the template adds for one message of this role.
func (f Fit) PerMessage(role string) int {
	if n, ok := f.RoleTokens[role]; ok {
		return n
	}
	return f.MessageTokens
}

// Overhead is what the template adds to a request of these messages.
func (f Fit) Overhead(msgs []Message) int {
	n := f.RequestTokens
	for _, m := range msgs {
		n += f.PerMessage(m.Role)
	}
	return n
}

// String is a one-line description for the plan summary and logs.
func (f Fit) String() string {
	s := fmt.Sprintf("template %d tokens per request + %d per message", f.RequestTokens, f.MessageTokens)
	for _, role := range slices.Sorted(maps.Keys(f.RoleTokens)) {
		s += fmt.Sprintf(" (%s: %d)", role, f.RoleTokens[role])
	}
	if p := f.perWord(); p != 1 {
		s += fmt.Sprintf(", %.3g tokens per word", p)
	}
	return s
}

// FitReport is what fitting did to one request.
type FitReport struct {
	Index  int `json:"index"`
	Target int `json:"target"` // the planned PromptTokens
	// Words is how many words the fitted messages carry (before: Planned).
	Words   int `json:"words"`
	Planned int `json:"planned_words"`
	// Expected is what the engine should count: the template's tokens plus
	// Words × TokensPerWord, rounded (exact when TokensPerWord is 1).
	Expected int `json:"expected"`
	// Off is Expected − Target: positive when the target is smaller than the
	// template and one word per message, 0 when fitted exactly.
	Off int `json:"off"`
	// Skipped says why the request was left as planned ("" = fitted):
	// its text is not synthetic (a file dataset's real text).
	Skipped string `json:"skipped,omitempty"`
}

// SkipRealText is FitReport.Skipped for a request whose text is not made of
// vocabulary words: it is sent as it is, and only the engine's tokenizer can
// count it (calibrate.Count).
const SkipRealText = "real text: not fitted; count it with the engine's tokenizer"

// FitPrompts fits every request in place (see FitRequest) and returns one
// report per request, in order. Requests whose text is not made of
// vocabulary words (file datasets) are left alone and reported Skipped.
func FitPrompts(reqs []Request, f Fit) []FitReport {
	out := make([]FitReport, len(reqs))
	for i := range reqs {
		if !Synthetic(reqs[i].Messages) {
			out[i] = unfitted(reqs[i], f, SkipRealText)
			continue
		}
		reqs[i], out[i] = FitRequest(reqs[i], f)
	}
	return out
}

// FitRequest shortens (or, when a word costs less than a token, lengthens
// by repeating) the words of r's messages so that an engine counting as f
// says counts r.PromptTokens, which keeps meaning the target. It does not
// look at whether the text is synthetic; FitPrompts and Plan.WithFit do.
// r's messages are not modified: the result has its own.
func FitRequest(r Request, f Fit) (Request, FitReport) {
	rep := FitReport{Index: r.Index, Target: r.PromptTokens}
	n := len(r.Messages)
	fields := make([][]string, n)
	planned := make([]int, n)
	for i, m := range r.Messages {
		fields[i] = strings.Fields(m.Content)
		planned[i] = len(fields[i])
		rep.Planned += planned[i]
	}
	if n == 0 {
		rep.Expected = f.RequestTokens
		rep.Off = rep.Expected - rep.Target
		return r, rep
	}
	want := fitWords(r.Messages, planned, r.PromptTokens, f)
	msgs := make([]Message, n)
	for i, m := range r.Messages {
		msgs[i] = m
		if want[i] != planned[i] {
			msgs[i].Content = takeWords(m.Content, fields[i], want[i])
		}
		rep.Words += want[i]
	}
	r.Messages = msgs
	rep.Expected = f.Overhead(r.Messages) + int(math.Round(float64(rep.Words)*f.perWord()))
	rep.Off = rep.Expected - rep.Target
	return r, rep
}

// fitWords chooses the words of each message: planned[i] words planned,
// target tokens for the request. Message i gets what the running total up
// to it leaves after the template's share, less what the messages before it
// already hold, and at least one word: a message's words depend on it and
// the messages before it only (a shared prefix stays shared, a multi-turn
// history stays the previous turn's prompt). The last message gets what
// the target leaves; when even one word there is too many, the request
// stays above its target.
func fitWords(msgs []Message, planned []int, target int, f Fit) []int {
	n := len(planned)
	tpw := f.perWord()
	want := make([]int, n)
	held, share := 0, 0
	for i, p := range planned {
		share += p - f.PerMessage(msgs[i].Role)
		if i == 0 {
			share -= f.RequestTokens
		}
		d := int(math.Round(float64(share) / tpw))
		if i == n-1 {
			d = int(math.Round(float64(target-f.Overhead(msgs)) / tpw))
		}
		if p == 0 {
			continue // an empty message stays empty
		}
		want[i] = max(d-held, 1)
		held += want[i]
	}
	return want
}

// takeWords returns the first k words of content (fields are its words),
// cycling through them when k is larger. Content made of single-spaced words
// keeps its exact leading bytes, so truncations of a shared text stay its
// prefixes.
func takeWords(content string, fields []string, k int) string {
	if k <= len(fields) {
		// Cut after the k-th word of the original text.
		seen, inWord := 0, false
		for i := 0; i < len(content); i++ {
			if content[i] >= 0x80 { // Unicode spaces split words too: rebuild
				return strings.Join(fields[:k], " ")
			}
			space := content[i] == ' ' || content[i] == '\t' || content[i] == '\n' || content[i] == '\r' || content[i] == '\v' || content[i] == '\f'
			if !space && !inWord {
				inWord = true
			} else if space && inWord {
				inWord = false
				seen++
				if seen == k {
					return content[:i]
				}
			}
		}
		if inWord && seen+1 == k {
			return content
		}
		return strings.Join(fields[:k], " ")
	}
	var b strings.Builder
	b.WriteString(strings.Join(fields, " "))
	for i := len(fields); i < k; i++ {
		b.WriteByte(' ')
		b.WriteString(fields[i%len(fields)])
	}
	return b.String()
}

// unfitted reports a request left as planned.
func unfitted(r Request, f Fit, why string) FitReport {
	words := CountTokens(r.Messages)
	exp := f.Overhead(r.Messages) + int(math.Round(float64(words)*f.perWord()))
	return FitReport{Index: r.Index, Target: r.PromptTokens, Words: words, Planned: words, Expected: exp, Off: exp - r.PromptTokens, Skipped: why}
}

var vocabularySet = sync.OnceValue(func() map[string]bool {
	s := make(map[string]bool, len(vocabulary))
	for _, w := range vocabulary {
		s[w] = true
	}
	return s
})

// Synthetic reports whether every word of the messages is a vocabulary
// word: text a plan generated, which fitting may shorten. Real text (file
// datasets) is not.
func Synthetic(msgs []Message) bool {
	set := vocabularySet()
	for _, m := range msgs {
		for w := range strings.FieldsSeq(m.Content) {
			if !set[w] {
				return false
			}
		}
	}
	return true
}

// streamProbe keys the text of VocabularyText (kept apart from rng.go's streams).
const streamProbe uint64 = 1 << 20

// VocabularyText returns n words of the synthetic prompts' vocabulary joined
// by single spaces, drawn from a stream keyed by key: the text calibration
// probes send, so that they measure what the plan's prompts cost.
func VocabularyText(key uint64, n int) string {
	return words(newRand(0, streamProbe, key), n)
}

// WithFit returns a plan whose synthetic requests are fitted with f (see
// FitRequest): the same requests otherwise, still deterministic (request i
// depends on the scenario, the seed, i and f only), PromptTokens still the
// target. A file dataset's real text is left as it is (FitOf says so).
// A zero Fit returns p itself.
func (p *Plan) WithFit(f Fit) *Plan {
	if f.IsZero() {
		return p
	}
	out := *p
	if p.agentic != nil {
		// Its histories hold the engine's own replies, counted by the
		// engine: only the planned text could be fitted, so none is.
		out.dataDesc = p.dataDesc + "; an agentic replay, not fitted (" + f.String() + ")"
		return &out
	}
	inner := p.data
	if fd, ok := inner.(fittedData); ok {
		inner = fd.inner
	}
	out.data = fittedData{inner: inner, fit: f}
	out.dataDesc = p.dataDesc + "; fitted to the engine's count: " + f.String()
	if _, real := inner.(*records); real {
		out.dataDesc = p.dataDesc + "; real text, not fitted (" + f.String() + ")"
	}
	return &out
}

// FitOf reports what fitting did to request i; ok is false when the plan
// has no fit.
func (p *Plan) FitOf(i int) (rep FitReport, ok bool) {
	fd, ok := p.data.(fittedData)
	if !ok {
		return FitReport{}, false
	}
	r := p.planned(fd.inner, i)
	if _, real := fd.inner.(*records); real {
		return unfitted(r, fd.fit, SkipRealText), true
	}
	_, rep = FitRequest(r, fd.fit)
	return rep, true
}

// planned is request i as the dataset made it, before fitting.
func (p *Plan) planned(d dataset, i int) Request {
	msgs, promptTokens, maxTokens := d.request(i)
	return Request{Index: i, Messages: msgs, PromptTokens: promptTokens, MaxTokens: maxTokens}
}

// fittedData fits the requests of a synthetic dataset.
type fittedData struct {
	inner dataset
	fit   Fit
}

func (d fittedData) request(i int) ([]Message, int, int) {
	msgs, promptTokens, maxTokens := d.inner.request(i)
	if _, real := d.inner.(*records); real {
		return msgs, promptTokens, maxTokens
	}
	r, _ := FitRequest(Request{Index: i, Messages: msgs, PromptTokens: promptTokens}, d.fit)
	return r.Messages, promptTokens, maxTokens
}
