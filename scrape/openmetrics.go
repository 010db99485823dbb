package scrape

import (
	"bytes"
	"errors"
	"strings"

	"github.com/prometheus/common/expfmt"
)

// openMetricsToText rewrites an OpenMetrics 1.0 exposition into the classic
// text format, line for line (a dropped line becomes empty, so the text
// parser's line numbers still point into the original body):
//
//   - a counter family x has samples x_total: its HELP and TYPE lines are
//     renamed x_total, as the classic format names them;
//   - x_created samples of counters, histograms and summaries are dropped
//     (they are creation times, not values);
//   - gauge histograms' x_gcount and x_gsum become x_count and x_sum;
//   - info and stateset families become gauges (info samples are x_info),
//     unknown becomes untyped;
//   - sample timestamps (seconds in OpenMetrics, milliseconds in text) and
//     exemplars are cut: llmbench stamps scrapes itself.
//
// It checks that the body ends with "# EOF" and nothing follows, which is
// how a truncated OpenMetrics body shows. The rest of the grammar is left to
// the text parser. See docs/decisions/0301-openmetrics-via-text-parser.md for
// why expfmt's own OpenMetrics decoder is not used.
func openMetricsToText(body []byte) ([]byte, error) {
	lines := bytes.Split(body, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1] // the final newline
	}
	eof := -1
	for i, l := range lines {
		if string(bytes.TrimRight(l, "\r")) == "# EOF" {
			eof = i
			break
		}
	}
	switch {
	case eof < 0:
		return nil, expfmt.ParseError{Line: len(lines) + 1, Msg: "OpenMetrics exposition does not end with # EOF (truncated?)"}
	case eof != len(lines)-1:
		return nil, expfmt.ParseError{Line: eof + 2, Msg: "data after # EOF"}
	}

	// TYPE lines first: Python's client writes HELP before TYPE, and a
	// counter's HELP must be renamed too.
	types := map[string]string{} // family name → OpenMetrics type
	for _, l := range lines[:eof] {
		if keyword, name, rest, ok := splitComment(string(l)); ok && keyword == "TYPE" {
			types[name] = strings.TrimSpace(rest)
		}
	}
	var out bytes.Buffer
	out.Grow(len(body))
	for _, l := range lines[:eof] {
		out.WriteString(rewriteOpenMetricsLine(string(l), types))
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// splitComment splits "# KEYWORD name rest"; ok is false for other lines.
func splitComment(line string) (keyword, name, rest string, ok bool) {
	after, found := strings.CutPrefix(line, "# ")
	if !found {
		return "", "", "", false
	}
	keyword, after, found = strings.Cut(after, " ")
	if !found {
		return "", "", "", false
	}
	name, rest, _ = strings.Cut(after, " ")
	return keyword, name, rest, true
}

func rewriteOpenMetricsLine(line string, types map[string]string) string {
	if strings.HasPrefix(line, "#") {
		keyword, name, rest, ok := splitComment(line)
		if !ok {
			return line
		}
		switch keyword {
		case "UNIT":
			return ""
		case "TYPE", "HELP":
			typ := types[name]
			switch typ {
			case "counter":
				name += "_total"
			case "info":
				name += "_info"
			}
			if keyword == "TYPE" {
				switch typ {
				case "info", "stateset":
					rest = "gauge"
				case "unknown":
					rest = "untyped"
				}
			}
			return "# " + keyword + " " + name + " " + rest
		}
		return line
	}
	name, rest, ok := splitSample(line)
	if !ok {
		return line // let the text parser name the error
	}
	for _, suffix := range []string{"_created", "_gcount", "_gsum"} {
		base, found := strings.CutSuffix(name, suffix)
		if !found {
			continue
		}
		switch typ := types[base]; {
		case suffix == "_created" && (typ == "counter" || typ == "histogram" || typ == "gaugehistogram" || typ == "summary"):
			return ""
		case suffix == "_gcount" && typ == "gaugehistogram":
			name = base + "_count"
		case suffix == "_gsum" && typ == "gaugehistogram":
			name = base + "_sum"
		}
	}
	return name + rest
}

// splitSample splits `name{labels} value [timestamp] [# exemplar]` into the
// name and `{labels} value`, dropping the timestamp and the exemplar. A name
// quoted inside the braces (`{"a.b",x="y"} 1`) stays in rest, and name is "".
func splitSample(line string) (name, rest string, ok bool) {
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", "", false
	}
	name = line[:i]
	end := i // end of the name and label set
	if line[i] == '{' {
		j, err := closingBrace(line, i)
		if err != nil {
			return "", "", false
		}
		end = j + 1
	}
	fields := strings.Fields(line[end:])
	if len(fields) == 0 {
		return "", "", false
	}
	return name, line[i:end] + " " + fields[0], true
}

// closingBrace finds the '}' that closes the label set opened at open,
// skipping quoted label values with their escapes.
func closingBrace(line string, open int) (int, error) {
	inQuote := false
	for k := open + 1; k < len(line); k++ {
		switch c := line[k]; {
		case inQuote && c == '\\':
			k++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return k, nil
		}
	}
	return 0, errors.New("unclosed label set")
}
