package gates

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteMetrics prints the vocabulary gates may name as a table (name, unit,
// the better direction, meaning), then how a phase alone is read:
// `llmbench gate --metrics`.
func WriteMetrics(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tunit\tbetter\tmeaning")
	for _, m := range Metrics() {
		better := m.Better
		if better == "" {
			better = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Unit, better, m.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nEvery client.* and server.* metric also reads one phase alone (a sweep point, say):"+
		" phase[NAME].<metric>, e.g. phase[rate-8].client.ttft.p99 < 1s.")
	return err
}
