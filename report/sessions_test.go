package report

import (
	"bytes"
	"fmt"
	"testing"
)

// agenticRun is fixedRun as an agentic replay with images: its requests
// belong to two sessions whose later calls the engine served partly from
// its cache, and two carry images the engine charged 326 tokens each.
func agenticRun() Summary {
	meta, recs, rows := fixedRun()
	meta.ID, meta.Scenario, meta.Description = "agentic-run", "agentic", ""
	for i := range recs {
		r := &recs[i]
		r.Session = fmt.Sprintf("s%d", i%2)
		r.CachedTokens = 8 * (i / 2) // each session's calls resend more of its history
	}
	for _, i := range []int{1, 2} {
		recs[i].Images = 2
		recs[i].PromptTokens += 2 * 326
	}
	return Compute(meta, recs, rows, nil, 0)
}

// TestSessionsAndImagesGolden: report.md and the text summary show the
// images' charge and the sessions' prefix-cache hit rates where they show
// tokens.
func TestSessionsAndImagesGolden(t *testing.T) {
	s := agenticRun()
	// The figures the reports show, from the records above: session s0 has
	// requests 0, 2, 4 (cached 0+8+16 of 32+684+32), s1 requests 1, 3 (the
	// 5th failed; cached 0+8 of 684+32).
	if ss := s.Sessions; ss == nil || ss.Count != 2 || ss.List[0].CachedTokens != 24 || ss.List[0].PromptTokens != 748 ||
		ss.List[1].CachedTokens != 8 || ss.List[1].PromptTokens != 716 {
		t.Fatalf("sessions %+v", s.Sessions)
	}
	if im := s.Client.Tokens.Images; im == nil || im.Images != 4 || im.Tokens != 1304 || im.PerImage != 326 {
		t.Fatalf("images %+v", s.Client.Tokens.Images)
	}
	for _, tc := range []struct {
		name   string
		render Renderer
		want   []string
	}{
		{"summary_agentic.golden.md", RenderMarkdown, []string{
			"- Images: 4 in 2 requests; the engine charged 1304 prompt tokens beyond their text's 64 (326.0 per image).",
			"- Sessions: 2, prefix-cache hit rate per session p50 ",
		}},
		{"summary_agentic.golden.txt", RenderText, []string{
			"  images: 4 in 2 requests; the engine charged 1304 prompt tokens beyond their text's 64",
			"  sessions: 2, prefix-cache hit rate per session p50 ",
		}},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf, s); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !bytes.Contains(buf.Bytes(), []byte(w)) {
				t.Errorf("%s lacks %q", tc.name, w)
			}
		}
		golden(t, tc.name, buf.Bytes())
	}
}
