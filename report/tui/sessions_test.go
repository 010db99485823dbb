package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/live"
)

// agenticProgress is busyProgress of an agentic replay with images: the
// window's sessions' prefix cache and its images.
func agenticProgress(sec int) live.Progress {
	p := busyProgress(sec)
	p.Sessions = live.SessionsLive{Sessions: 3, HitRateP50: 0.62, HitRateMin: 0.4, OverallRate: 0.63}
	p.Images = live.ImagesLive{Images: 20, PerSec: 2, TokensPerImage: 326}
	return p
}

// TestSessionsAndImagesView: a sample with sessions and images, through
// Update, shows them in View; one without shows neither row.
func TestSessionsAndImagesView(t *testing.T) {
	t.Parallel()
	m, _ := step(t, newModel(quickstart, nil), sampleMsg{agenticProgress(10)})
	view := ansi.Strip(asciiView(t, m))
	for _, want := range []string{"sessions   3 in window · prefix-cache hit p50 62% · min 40% · 63% overall",
		"images     2.0/s · 326 prompt tokens each beyond the text · 20 in window"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	m, _ = step(t, m, sampleMsg{busyProgress(11)})
	if view := ansi.Strip(asciiView(t, m)); strings.Contains(view, "sessions ") || strings.Contains(view, "images ") {
		t.Errorf("a window without sessions or images shows them:\n%s", view)
	}
}
