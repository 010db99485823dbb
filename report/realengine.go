package report

import (
	"fmt"
	"strings"
)

// What real engines send and the summary must say in words: the sentences
// the text and Markdown summaries share.

// firstTokenNote says which events count as the first token, and how TTFC
// relates to TTFT.
func firstTokenNote(c ClientSide) string {
	s := "TTFT counts to the first chunk of generated output: content, reasoning or a tool-call delta"
	switch {
	case c.FirstTokenNotContent > 0:
		s += fmt.Sprintf("; TTFC to the first content: %d of %d successful requests reasoned or called a tool first", c.FirstTokenNotContent, c.Requests.OK)
	case c.Latency.TTFC.N > 0:
		s += "; TTFC (to the first content) is the same here"
	}
	return s
}

// showTTFC reports whether the latency tables get a TTFC row: when some
// request's TTFC differs from its TTFT.
func showTTFC(c ClientSide) bool { return c.FirstTokenNotContent > 0 && c.Latency.TTFC.N > 0 }

// chunksNote explains per-token ITL when chunks carry several tokens ("" when
// they do not).
func chunksNote(t TokenCounts) string {
	if t.ChunksPerToken <= 0 || t.ChunksPerToken >= 1 {
		return ""
	}
	return fmt.Sprintf("chunks carry several tokens (%.2f chunks per output token): ITL is per token, each chunk's gap spread over its tokens (source %s)",
		t.ChunksPerToken, sourceText(t.PerChunkSource, t.PerChunkBySource))
}

func sourceText(src string, by map[string]int) string {
	if len(by) == 0 {
		return orDash(src)
	}
	return src + ": " + reasonList(by)
}

// outputShortWarning says that lengths were not enforced ("" when every
// request got its max_tokens).
func outputShortWarning(t TokenCounts) string {
	o := t.OutputShort
	if o == nil || o.Requests == 0 {
		return ""
	}
	return fmt.Sprintf("lengths were not enforced: %d of %d requests stopped early, %.1f %% of the planned output tokens missing (a short request got %.0f %% of its max_tokens on average: the engine did not honour ignore_eos / min_tokens)",
		o.Requests, o.Of, 100*o.MissingFraction, 100*o.MeanFraction)
}

// promptNote compares the engine's prompt token counts with the plan's
// ("" when they agree exactly).
func promptNote(t TokenCounts) string {
	e := t.PromptError
	if e == nil || (e.Min == 0 && e.Max == 0) {
		return ""
	}
	switch {
	case e.Min > 0:
		return fmt.Sprintf("the engine counted %.1f %% more prompt tokens than planned (p50 %+.0f, p99 %+.0f tokens per request): the chat template's tokens",
			100*e.FractionMean, e.P50, e.P99)
	case e.Max < 0:
		return fmt.Sprintf("the engine counted %.1f %% fewer prompt tokens than planned (p50 %+.0f, p99 %+.0f tokens per request): the prompts' text is shorter in the engine's tokenizer",
			-100*e.FractionMean, e.P50, e.P99)
	}
	return fmt.Sprintf("the engine's prompt token counts differ from the plan's by p50 %+.0f, p99 %+.0f tokens per request (%+.1f %% to %+.1f %% at p50 and p99, from %+.0f to %+.0f tokens)",
		e.P50, e.P99, 100*e.FractionP50, 100*e.FractionP99, e.Min, e.Max)
}

// streamsNote counts requests sent with stream:false and streams that ended
// without [DONE] ("" when there are none).
func streamsNote(h Health) string {
	var parts []string
	if h.NotStreamed > 0 {
		parts = append(parts, fmt.Sprintf("%d requests were not streamed (stream:false): only their E2E and usage were measured, they have no TTFT, ITL or TPOT", h.NotStreamed))
	}
	if h.StreamsWithoutDone > 0 {
		parts = append(parts, fmt.Sprintf("%d streams ended after their finish_reason without [DONE] (counted as successes)", h.StreamsWithoutDone))
	}
	return strings.Join(parts, "; ")
}

// serverTimingRows are the rows of the llama.cpp timings table: a label and
// a distribution (seconds).
func serverTimingRows(st *ServerTimings) []struct {
	name string
	d    Dist
} {
	return []struct {
		name string
		d    Dist
	}{
		{"server prefill (prompt_ms)", st.Prompt},
		{"client TTFT − server prefill", st.TTFTMinusPrompt},
		{"server decode per token", st.PredictedPerToken},
		{"client decode per token", st.ClientPerToken},
	}
}

// distCols is a distribution's n, p50 and p99 in ms, each quantile with
// its interval (msFigure); "—" without samples.
func distCols(d Dist) (n, p50, p99 string) {
	if d.N == 0 {
		return "0", "—", "—"
	}
	return fmt.Sprint(d.N), quantileFigure(d, 50), quantileFigure(d, 99)
}

// quantileFigure is d's percentile p in ms with its interval and mark, as
// the latency table shows one ("—" without samples).
func quantileFigure(d Dist, p float64) string {
	v, ok := d.Quantile(p)
	if !ok || d.N == 0 {
		return "—"
	}
	return msFigure(v, IntervalOf(d.QuantileCI(p)))
}

// upperFirst capitalises a sentence's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Notes are what a summary says in words about what the engine sent, for
// renderers outside this package (report/html): Cautions a reader must
// weigh (lengths not enforced, requests not streamed, streams without
// [DONE]); Latency the notes that read the latency table (which events
// count as the first token, chunks carrying several tokens); Tokens the
// prompt lengths against the plan.
type Notes struct {
	Cautions, Latency, Tokens []string
}

// NotesOf says them for s's measured phases; empty parts are nil.
func NotesOf(s Summary) Notes {
	var n Notes
	add := func(to *[]string, line string) {
		if line != "" {
			*to = append(*to, upperFirst(line))
		}
	}
	c := s.Client
	add(&n.Cautions, outputShortWarning(c.Tokens))
	add(&n.Cautions, streamsNote(s.Health))
	add(&n.Cautions, violationsNote(s.Health))
	add(&n.Cautions, wireNote(s.Health))
	add(&n.Latency, firstTokenNote(c))
	add(&n.Latency, chunksNote(c.Tokens))
	add(&n.Tokens, contextNote(c.Tokens))
	add(&n.Tokens, promptNote(c.Tokens))
	if p := c.Tokens.PromptCalibration; p != "" {
		add(&n.Tokens, "prompt calibration: "+p)
	}
	return n
}

// ServerTimingRow is one row of the llama.cpp timings table.
type ServerTimingRow struct {
	Name string
	Dist Dist // seconds
}

// ServerTimingRows are the rows of the llama.cpp timings table, in order.
func ServerTimingRows(st *ServerTimings) []ServerTimingRow {
	var out []ServerTimingRow
	for _, r := range serverTimingRows(st) {
		out = append(out, ServerTimingRow{Name: r.name, Dist: r.d})
	}
	return out
}
