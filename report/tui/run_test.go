package tui

import (
	"io"
	"testing"

	"github.com/llmbench-org/llmbench/live"
)

func TestRunRejectsMissingParts(t *testing.T) {
	t.Parallel()
	progress := func() live.Progress { return live.Progress{} }
	cases := []struct {
		name     string
		progress func() live.Progress
		opts     Options
	}{
		{"no output", progress, Options{}},
		{"no progress", nil, Options{Output: io.Discard}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if err := Run(t.Context(), Header{}, c.progress, c.opts); err == nil {
				t.Error("Run returned nil")
			}
		})
	}
}
