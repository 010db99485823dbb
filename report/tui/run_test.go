package tui

import (
	"io"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

func TestRunRejectsMissingParts(t *testing.T) {
	t.Parallel()
	progress := func() report.Progress { return report.Progress{} }
	cases := []struct {
		name     string
		progress func() report.Progress
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
