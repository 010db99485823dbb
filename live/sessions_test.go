package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// TestSessionsLive: the window's successful session requests give each
// session's cached ÷ prompt tokens (their median and lowest) and all of
// them together; requests with images give images/s and the tokens the
// engine charged each beyond the text; a failure or a request outside a
// session counts in neither; the plain line shows both.
func TestSessionsLive(t *testing.T) {
	t.Parallel()
	w := newWindow(10 * time.Second)
	add := func(at time.Duration, r client.Record) {
		r.Sent, r.End = at, at+20*time.Millisecond
		if r.ErrorClass == "" {
			r.Status = 200
		}
		w.addRecord(&r, at+20*time.Millisecond)
	}
	// s0: 100 + 300 prompt tokens, 0 + 240 cached (60 %); s1: 200, 160
	// cached (80 %); s2: 400, 100 cached (25 %).
	add(time.Second, client.Record{Session: "s0", PromptTokens: 100, TargetPromptTokens: 100})
	add(2*time.Second, client.Record{Session: "s0", PromptTokens: 300, CachedTokens: 240, TargetPromptTokens: 300})
	add(3*time.Second, client.Record{Session: "s1", PromptTokens: 200, CachedTokens: 160, TargetPromptTokens: 200})
	// Two images the engine charged 326 tokens each beyond the text's 48.
	add(4*time.Second, client.Record{Session: "s2", PromptTokens: 400, CachedTokens: 100, TargetPromptTokens: 48, Images: 1})
	add(4*time.Second, client.Record{PromptTokens: 374, CachedTokens: 374, TargetPromptTokens: 48, Images: 1})
	add(5*time.Second, client.Record{Session: "s1", PromptTokens: 900, CachedTokens: 900, Images: 3, ErrorClass: client.ErrHTTPStatus})
	p := w.progress(10 * time.Second)
	want := SessionsLive{Sessions: 3, HitRateP50: 0.6, HitRateMin: 0.25, OverallRate: 500.0 / 1000}
	if p.Sessions != want {
		t.Errorf("sessions %+v, want %+v", p.Sessions, want)
	}
	if im := p.Images; im.Images != 2 || im.PerSec != 0.2 || im.TokensPerImage != 339 {
		t.Errorf("images %+v, want 2 over 10 s, (352+326)/2 tokens each", im)
	}
	line := ProgressLine(p)
	for _, want := range []string{"3 sessions: cache hit p50 60% min 25%, 50% overall", "0.2 images/s, 339 tok each"} {
		if !strings.Contains(line, want) {
			t.Errorf("plain line lacks %q:\n%s", want, line)
		}
	}
	// Once the window has moved past them, nothing is left of them.
	if p := w.progress(30 * time.Second); p.Sessions != (SessionsLive{}) || p.Images != (ImagesLive{}) || strings.Contains(ProgressLine(p), "session") {
		t.Errorf("an empty window shows sessions %+v, images %+v", p.Sessions, p.Images)
	}
}
