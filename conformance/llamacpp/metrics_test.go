package llamacpp

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestMetricFamilies: the built-in engine writes exactly the real server's
// /metrics families (llama-server --metrics): the same names, types and help
// texts, with no histogram and no finished-request counter.
func TestMetricFamilies(t *testing.T) {
	both(t)
	r, e := families(t, real), families(t, emulated)
	names := func(m map[string]family) []string {
		out := make([]string, 0, len(m))
		for n := range m {
			if strings.HasPrefix(n, "llamacpp:") {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	if rn, en := names(r), names(e); !slices.Equal(rn, en) {
		t.Errorf("families differ:\nreal     %v\nemulated %v", rn, en)
	}
	for n, rf := range r {
		ef, ok := e[n]
		if !ok {
			continue
		}
		if rf.typ != ef.typ || rf.help != ef.help {
			t.Errorf("%s: real %s %q, emulated %s %q", n, rf.typ, rf.help, ef.typ, ef.help)
		}
		if rf.typ != "counter" && rf.typ != "gauge" {
			t.Errorf("%s: type %s", n, rf.typ)
		}
	}
}

// delta is how far each family moved between two reads.
func delta(before, after map[string]family, name string) float64 {
	return after["llamacpp:"+name].value - before["llamacpp:"+name].value
}

// TestCountersMove: for one request alone on the server, the prompt counter
// moves by the prompt tokens the slot computed (timings.prompt_n: the prompt
// less what the slot's cache held) and the cached counter by the rest, both
// once the prompt is done, before the last token; the generation counter
// moves by the completion tokens at the request's end; there is one decode
// call per generated token (the prompt's last batch gives the first); the
// generation time counter moves by the request's own timings.predicted_ms.
// A repeated prompt is all cached but its last token, which the slot
// computes again.
func TestCountersMove(t *testing.T) {
	for _, tg := range both(t) {
		before := families(t, tg)
		body := chat(tg, words(60)+" "+tg.name, 300)
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
		resp := post(t, tg, "/v1/chat/completions", body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", tg.name, resp.StatusCode)
		}
		// Read up to the first content chunk, then look at /metrics while
		// the request (most likely) still runs.
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		for n > 0 && !strings.Contains(string(buf[:n]), `"content":"`) {
			n, _ = resp.Body.Read(buf)
		}
		during := families(t, tg)
		s := readSSE(t, tg, resp)
		last := s.events[len(s.events)-1]
		pn, _ := num(last, "timings", "prompt_n")
		cn, _ := num(last, "timings", "cache_n")
		predictedMS, _ := num(last, "timings", "predicted_ms")
		pt, _ := num(last, "usage", "prompt_tokens")
		ct, _ := num(last, "usage", "completion_tokens")
		if pn+cn != pt || ct != 300 {
			t.Fatalf("%s: timings %v, usage %v", tg.name, last["timings"], last["usage"])
		}
		if delta(before, during, "tokens_predicted_total") == 0 {
			// Still running when /metrics answered.
			if d := delta(before, during, "prompt_tokens_total"); d != pn {
				t.Errorf("%s: after the first token prompt_tokens_total moved by %v, want %v", tg.name, d, pn)
			}
			if g := during["llamacpp:requests_processing"].value; g != 1 {
				t.Errorf("%s: requests_processing %v during the request", tg.name, g)
			}
		} else {
			t.Logf("%s: the request had finished when /metrics answered", tg.name)
		}
		after := families(t, tg)
		for _, c := range []struct {
			name string
			want float64
		}{
			{"prompt_tokens_total", pn}, {"prompt_tokens_cached_total", cn},
			{"tokens_predicted_total", ct}, {"n_decode_total", ct},
		} {
			if d := delta(before, after, c.name); d != c.want {
				t.Errorf("%s: %s moved by %v, want %v", tg.name, c.name, d, c.want)
			}
		}
		got := delta(before, after, "tokens_predicted_seconds_total") * 1e3
		if total := after["llamacpp:tokens_predicted_seconds_total"].value; math.Abs(got-predictedMS) > 0.002+1e-5*total*1e3 {
			t.Errorf("%s: tokens_predicted_seconds_total moved by %.4f ms, timings.predicted_ms %.4f", tg.name, got, predictedMS)
		}
		if d := delta(before, after, "prompt_seconds_total"); d <= 0 {
			t.Errorf("%s: prompt_seconds_total moved by %v", tg.name, d)
		}
		if m := after["llamacpp:n_tokens_max"].value; m < pt+ct-1 {
			t.Errorf("%s: n_tokens_max %v below the request's %v", tg.name, m, pt+ct-1)
		}
		if g := after["llamacpp:requests_processing"].value + after["llamacpp:requests_deferred"].value; g != 0 {
			t.Errorf("%s: requests processing and deferred %v after the request", tg.name, g)
		}

		// The same prompt again: all cached but the last token.
		again := chat(tg, words(60)+" "+tg.name, 5)
		postJSON(t, tg, "/v1/chat/completions", again)
		_, ans := postJSON(t, tg, "/v1/chat/completions", again)
		cached, _ := num(ans, "usage", "prompt_tokens_details", "cached_tokens")
		if cached != pt-1 {
			t.Errorf("%s: a repeated prompt of %v tokens had %v cached, want all but one", tg.name, pt, cached)
		}
	}
}

// TestThroughputGaugesPerScrape: prompt_tokens_seconds and
// predicted_tokens_seconds are rates over the requests finished since the
// previous /metrics read: a read with none in between answers 0.
func TestThroughputGaugesPerScrape(t *testing.T) {
	for _, tg := range both(t) {
		families(t, tg)
		_, _ = postJSON(t, tg, "/v1/chat/completions", chat(tg, words(30)+" gauges", 20))
		first := families(t, tg)
		second := families(t, tg)
		for _, g := range []string{"prompt_tokens_seconds", "predicted_tokens_seconds"} {
			if v := first["llamacpp:"+g].value; v <= 0 {
				t.Errorf("%s: %s %v after a request", tg.name, g, v)
			}
			if v := second["llamacpp:"+g].value; v != 0 {
				t.Errorf("%s: %s %v on a second read with no request between, want 0", tg.name, g, v)
			}
		}
	}
}
