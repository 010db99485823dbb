package peers

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/sentload"
)

// Schema names the JSON shape of a Report.
const Schema = "llmbench.compare-peers/v1"

// Report is every peer result of a compare beside the first llmbench run.
type Report struct {
	Schema       string        `json:"schema"`
	Explanations []Explanation `json:"explanations"`
}

// Compare reads the peers' result files and explains each beside the
// llmbench run runDir ("" = the results alone).
func Compare(runDir string, files []string) (Report, error) {
	rep := Report{Schema: Schema}
	var run []client.Record
	var runLoad *sentload.Fingerprint
	if runDir != "" {
		recs, meta, err := runRecords(runDir)
		if err != nil {
			return rep, err
		}
		run, runLoad = recs, report.SentLoad(meta, recs)
	}
	for _, f := range files {
		results, err := Read(f)
		if err != nil {
			return rep, err
		}
		for _, r := range results {
			rep.Explanations = append(rep.Explanations, Explain(r, runDir, run, runLoad))
		}
	}
	return rep, nil
}

// RenderJSON writes the report as JSON (schema llmbench.compare-peers/v1).
func RenderJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// RenderText writes the report as tables: per result, each metric's
// statistic as the tool has it and as llmbench's run has it, the
// difference, its definitional part and its measurement part; then the
// definitional parts one by one where they are not zero.
func RenderText(w io.Writer, rep Report) error {
	for _, ex := range rep.Explanations {
		res := ex.Result
		fmt.Fprintf(w, "%s (%s): %d completed, %d failed\n", res.Label, redact.Printable(res.Path), res.Completed, res.Failed)
		if ex.Run != "" {
			fmt.Fprintf(w, "  beside llmbench run %s\n", redact.Printable(ex.Run))
		}
		if ex.Load != nil {
			fmt.Fprintf(w, "  load: %s\n", ex.Load.Says())
			for _, u := range ex.Load.Unknown {
				fmt.Fprintf(w, "    (%s)\n", u)
			}
		}
		for _, n := range ex.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  metric\t%s\t%s under llmbench's definitions\tllmbench\tdifference\tdefinitional\tmeasurement\n", res.Tool, res.Tool)
		for _, l := range ex.Lines {
			fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Metric, l.Stat, ms(l.Tool), ms(l.ToolUnderLlmbench), ms(l.Run), ms(l.Total), ms(l.Definitional), ms(l.Measurement))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		says := map[string]string{}
		var names []string
		for _, l := range ex.Lines {
			var parts []string
			for _, p := range l.Parts {
				if math.Abs(p.Seconds) >= shownPart {
					parts = append(parts, fmt.Sprintf("%s %+.3f ms", p.Name, p.Seconds*1e3))
					if _, seen := says[p.Name]; !seen {
						names = append(names, p.Name)
					}
					says[p.Name] = p.Says
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "  %s %s: %s\n", l.Metric, l.Stat, strings.Join(parts, ", "))
			}
		}
		for _, n := range names {
			fmt.Fprintf(w, "  (%s: %s)\n", n, says[n])
		}
		fmt.Fprintln(w)
	}
	return nil
}

// shownPart is the smallest part the text shows: below a microsecond it is
// the rounding of a file's float seconds.
const shownPart = 1e-6

func ms(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f ms", *v*1e3)
}
