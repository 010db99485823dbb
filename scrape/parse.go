package scrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protodelim"
)

// Exposition formats Parse understands, as recorded in Row.Format.
const (
	FormatText        = "text"
	FormatOpenMetrics = "openmetrics"
	FormatProtobuf    = "protobuf"
)

// Parse turns one exposition body into metric families, sorted by name.
//
// The content type picks the format. Text (text/plain, and anything unknown)
// goes to expfmt's classic text parser, built with model.UTF8Validation
// because its zero value is invalid and engines may expose UTF-8 names.
// OpenMetrics (application/openmetrics-text) is rewritten line for line into
// the text format first (see openMetricsToText), then parsed the same way:
// counters, histograms and summaries come out as in the text format, without
// their _created series. Delimited protobuf goes to expfmt's decoder. An
// empty content type (a file on disk) is sniffed: a body whose last line is
// "# EOF" is OpenMetrics, anything else is text.
//
// Errors name the format and, for syntax errors, the line number and its text.
func Parse(body []byte, contentType string) ([]*dto.MetricFamily, error) {
	fams, _, err := parse(body, contentType)
	return fams, err
}

// parse is Parse that also reports which format it used.
func parse(body []byte, contentType string) ([]*dto.MetricFamily, string, error) {
	if err := notExposition(body, contentType); err != nil {
		return nil, FormatText, err
	}
	format := formatOf(body, contentType)
	if format != FormatProtobuf {
		body = normalizeText(body)
	}
	var (
		fams []*dto.MetricFamily
		err  error
	)
	switch format {
	case FormatProtobuf:
		fams, err = parseProtobuf(body)
		if err == nil {
			err = checkFamilies(fams)
		}
	case FormatOpenMetrics:
		var text []byte
		if text, err = openMetricsToText(body); err == nil {
			if err = scanSamples(text); err == nil {
				fams, err = parseText(text)
			}
		}
	default:
		if err = scanSamples(body); err == nil {
			fams, err = parseText(body)
		}
	}
	if err != nil {
		return nil, format, parseError(body, format, err)
	}
	fams = adoptHistograms(fams)
	sort.Slice(fams, func(i, j int) bool { return fams[i].GetName() < fams[j].GetName() })
	return fams, format, nil
}

func parseText(body []byte) ([]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	fams := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		fams = append(fams, f)
	}
	return fams, nil
}

func formatOf(body []byte, contentType string) string {
	if contentType == "" {
		if lastLine(body) == "# EOF" {
			return FormatOpenMetrics
		}
		return FormatText
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return FormatText
	}
	switch mediaType {
	case expfmt.OpenMetricsType:
		return FormatOpenMetrics
	case expfmt.ProtoType:
		if params["encoding"] == "delimited" || params["encoding"] == "" {
			return FormatProtobuf
		}
	}
	return FormatText
}

// parseProtobuf reads length-delimited MetricFamily messages. It does not
// use expfmt's protobuf decoder, which trusts each length prefix with no
// limit and so allocates whatever a corrupt body claims (the fuzz test found
// a 200 TB allocation); here no message may be longer than the body.
func parseProtobuf(body []byte) ([]*dto.MetricFamily, error) {
	r := bufio.NewReader(bytes.NewReader(body))
	opts := protodelim.UnmarshalOptions{MaxSize: int64(len(body))}
	var fams []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		err := opts.UnmarshalFrom(r, f)
		if errors.Is(err, io.EOF) {
			return fams, nil
		}
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", len(fams)+1, err)
		}
		fams = append(fams, f)
	}
}

// parseError wraps a parser error with the format and, when the parser said
// which line was wrong, a quote of that line.
func parseError(body []byte, format string, err error) error {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("parse %s exposition: line %d %s: %w", format, pe.Line, strconv.Quote(lineText(body, pe.Line)), err)
	}
	return fmt.Errorf("parse %s exposition: %w", format, err)
}

// lineText returns line n (1-based) of body, cut to a readable length.
func lineText(body []byte, n int) string {
	const maxLen = 120
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(body, '\n')
		if j < 0 {
			return ""
		}
		body = body[j+1:]
	}
	if j := bytes.IndexByte(body, '\n'); j >= 0 {
		body = body[:j]
	}
	if len(body) > maxLen {
		return string(body[:maxLen]) + "…"
	}
	return string(body)
}

func lastLine(body []byte) string {
	body = bytes.TrimRight(body, " \t\r\n")
	if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	}
	return string(bytes.TrimSpace(body))
}
