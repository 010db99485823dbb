package html

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
)

// withSessionsAndImages makes records an agentic replay with images, with
// no randomness: request i belongs to session s(i mod 3), its cached prompt
// tokens a share that grows with its place in the session, and every fifth
// carries two images the engine charged 326 tokens each.
func withSessionsAndImages(records []client.Record) {
	for i := range records {
		r := &records[i]
		r.Session = fmt.Sprintf("s%d", i%3)
		r.CachedTokens = r.PromptTokens * min(i/3, 9) / (10 + i%3)
		if i%5 == 0 {
			r.Images = 2
			r.PromptTokens += 2 * 326
		}
	}
}

// TestSessionAndImageFacts: the sessions' hit rates as a tile and a fact,
// the images' charge as a fact; neither for a run without them.
func TestSessionAndImageFacts(t *testing.T) {
	t.Parallel()
	s := report.Summary{Sessions: &report.Sessions{Count: 3, MinHitRate: 0.4, Overall: 0.63, HitRate: report.Dist{N: 3, P50: 0.62, Max: 0.8}}}
	s.Client.Tokens.Images = &report.ImageTokens{Requests: 4, Images: 8, Prompt: 3000, TextTarget: 392, Tokens: 2608, PerImage: 326}
	tiles := sessionTiles(s.Sessions)
	if len(tiles) != 1 || tiles[0].Value != "62.0 %" || tiles[0].Sub != "min 40.0 % · max 80.0 % · 63.0 % overall · 3 sessions" {
		t.Errorf("session tiles %+v", tiles)
	}
	var got []string
	for _, f := range imageAndSessionFacts(s) {
		got = append(got, f.Label+": "+f.Value)
	}
	want := []string{"images: 8 in 4 requests; the engine charged 2\u202f608 prompt tokens beyond their text's 392 (326.0 per image)",
		"prefix cache per session: 3 sessions: hit rate p50 62.0 % (min 40.0 %, max 80.0 %), 63.0 % of their prompt tokens overall"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("facts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(sessionTiles(nil)) + len(imageAndSessionFacts(report.Summary{})); n != 0 {
		t.Errorf("a run without sessions or images has %d of their tiles and facts", n)
	}
}
