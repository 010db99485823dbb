package report

import (
	"strings"

	"github.com/llmbench-org/llmbench/internal/errwriter"
)

// gpuCacheMarkdown writes report.md's GPU section: the GPU telemetry over
// the measured phases, each GPU on its own row, and each phase's energy
// and prefix cache, as the text summary has them (gputext.go).
func gpuCacheMarkdown(ew *errwriter.Writer, s Summary) {
	phases := PhaseGPURows(s)
	if s.GPU == nil && phases == nil {
		return
	}
	ew.Printf("### GPU and prefix cache\n\n")
	if g := s.GPU; g != nil {
		for _, l := range gpuLines(g) {
			ew.Printf("%s\n", mdText(strings.TrimSpace(l)))
			ew.Printf("\n")
		}
		markdownTable(ew, GPUDeviceRows(g.Devices), 2)
	}
	markdownTable(ew, phases, 2)
}

// markdownTable writes rows (the first the header) as a Markdown table, its
// columns from the left-th on right-aligned (figures); nothing without rows.
func markdownTable(ew *errwriter.Writer, rows [][]string, left int) {
	if len(rows) == 0 {
		return
	}
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdText(c)
		}
		ew.Printf("| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			align := make([]string, len(r))
			for j := range align {
				align[j] = "---"
				if j >= left {
					align[j] = "---:"
				}
			}
			ew.Printf("|%s|\n", strings.Join(align, "|"))
		}
	}
	ew.Printf("\n")
}
