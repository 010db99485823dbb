package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// MaxBody is the largest exposition llmbench reads, from a target or a file
// (32 MiB; the largest real engine exposition seen is under 1 MiB). A bigger
// one is an error rather than an unbounded allocation: parsing costs tens of
// bytes of memory per body byte.
const MaxBody = 32 << 20

// MaxSeries is the most samples (lines that are not comments) one
// exposition may hold; a histogram counts one per bucket. A real engine
// exposes a few thousand; more is an error, checked before the parser
// allocates anything per series.
const MaxSeries = 200_000

// Errors of bodies that are not an exposition at all.
var (
	// ErrEmptyBody: a target that answers 200 with nothing has no metrics,
	// which is not the same as metrics that are all absent.
	ErrEmptyBody = errors.New("empty /metrics body")
	// ErrHTML: a login page, a proxy's error page or a UI at the wrong path.
	ErrHTML = errors.New("the server sent text/html, not a Prometheus exposition")
	// ErrBodyTooLarge: the body exceeded MaxBody.
	ErrBodyTooLarge = fmt.Errorf("body larger than %d MiB (scrape.MaxBody)", MaxBody>>20)
)

// readBody reads r up to MaxBody bytes; a longer body (one that never
// ends, too) is ErrBodyTooLarge, and what was read is returned cut to
// MaxBody. sizeHint (a Content-Length or a file size; <= 0 when unknown)
// sizes the buffer once.
func readBody(r io.Reader, sizeHint int64) ([]byte, error) {
	size := int64(4096)
	if sizeHint > 0 {
		size = min(sizeHint+1, MaxBody+1) // +1: EOF is seen without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > MaxBody {
				return buf[:MaxBody], ErrBodyTooLarge
			}
			// Double, but never past the cap: an endless body costs about
			// twice MaxBody in all, not four times.
			grown := make([]byte, len(buf), min(2*cap(buf), MaxBody+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if len(buf) > MaxBody {
				return buf[:MaxBody], ErrBodyTooLarge
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// notExposition rejects what cannot be an exposition before any parser sees
// it: an empty body (only white space) and HTML, by its content type or its
// first bytes (the error quotes line 1, so the page says what it is).
func notExposition(body []byte, contentType string) error {
	html := fmt.Errorf("%w: line 1 %s", ErrHTML, strconv.Quote(lineText(body, 1)))
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return html
	}
	start := bytes.TrimLeft(bytes.TrimPrefix(body, utf8BOM), " \t\r\n")
	if len(start) == 0 {
		return ErrEmptyBody
	}
	head := start[:min(len(start), 16)]
	if hasPrefixFold(head, "<!doctype") || hasPrefixFold(head, "<html") {
		return html
	}
	return nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// normalizeText drops a leading UTF-8 byte order mark and turns CRLF line
// ends into LF (a Windows exporter, or a capture saved on Windows), keeping
// the line numbers. The body is copied only when it changes.
func normalizeText(body []byte) []byte {
	body = bytes.TrimPrefix(body, utf8BOM)
	if bytes.Contains(body, []byte("\r\n")) {
		body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	}
	return body
}

// scanSamples checks what expfmt's text parser lets through, before it
// runs: more than MaxSeries samples, and a series (name and label set)
// written twice, which Prometheus rejects and which would otherwise be read
// as two replicas of one value. Lines it cannot read are left to the parser.
func scanSamples(text []byte) error {
	if err := countSamples(text); err != nil {
		return err
	}
	seen := map[string]int{}
	return eachSampleLine(text, func(line int, l []byte) error {
		name, labels, ok := seriesKey(l)
		if !ok {
			return nil
		}
		key := name + "\xfe" + strings.Join(labels, "\xfe")
		if first, dup := seen[key]; dup {
			return expfmt.ParseError{Line: line, Msg: fmt.Sprintf("duplicate series %s (first at line %d): Prometheus rejects such a scrape", seriesName(name, labels), first)}
		}
		seen[key] = line
		return nil
	})
}

// countSamples fails at the sample line past MaxSeries, allocating nothing.
func countSamples(text []byte) error {
	samples := 0
	return eachSampleLine(text, func(line int, _ []byte) error {
		if samples++; samples > MaxSeries {
			return expfmt.ParseError{Line: line, Msg: fmt.Sprintf("more than %d series (scrape.MaxSeries)", MaxSeries)}
		}
		return nil
	})
}

// eachSampleLine calls fn with each line of text that is neither blank nor
// a comment (leading blanks trimmed) and its 1-based number, until fn fails.
func eachSampleLine(text []byte, fn func(line int, l []byte) error) error {
	for line := 1; len(text) > 0; line++ {
		l := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		l = bytes.TrimLeft(l, " \t")
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		if err := fn(line, l); err != nil {
			return err
		}
	}
	return nil
}

// seriesKey reads a sample line's metric name and its labels as sorted
// name=value pairs (values as written, quotes included). ok is false when
// the line does not scan (the parser then says why).
func seriesKey(l []byte) (name string, labels []string, ok bool) {
	i := 0
	for i < len(l) && l[i] != '{' && l[i] != ' ' && l[i] != '\t' {
		i++
	}
	name = string(l[:i])
	if i == len(l) || l[i] != '{' {
		return name, nil, name != ""
	}
	i++ // '{'
	for {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i < len(l) && l[i] == '}' {
			break
		}
		// A label name, plain or quoted; a quoted string without "=" is the
		// metric name (UTF-8 names: {"my.metric", a="b"}).
		var key string
		if i < len(l) && l[i] == '"' {
			j, ok := quotedEnd(l, i)
			if !ok {
				return "", nil, false
			}
			key, i = string(l[i:j]), j
		} else {
			j := i
			for j < len(l) && l[j] != '=' && l[j] != ' ' && l[j] != '\t' && l[j] != ',' && l[j] != '}' {
				j++
			}
			key, i = string(l[i:j]), j
		}
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i < len(l) && l[i] == '=' {
			i++
			for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
				i++
			}
			if i >= len(l) || l[i] != '"' {
				return "", nil, false
			}
			j, ok := quotedEnd(l, i)
			if !ok {
				return "", nil, false
			}
			labels = append(labels, key+"="+string(l[i:j]))
			i = j
		} else if strings.HasPrefix(key, `"`) && name == "" {
			name = key
		} else {
			return "", nil, false
		}
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i < len(l) && l[i] == ',' {
			i++
			continue
		}
		if i < len(l) && l[i] == '}' {
			break
		}
		return "", nil, false
	}
	sort.Strings(labels)
	return name, labels, name != ""
}

// quotedEnd returns the index just past the quoted string that starts at
// l[i] == '"'.
func quotedEnd(l []byte, i int) (int, bool) {
	for j := i + 1; j < len(l); j++ {
		switch l[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func seriesName(name string, labels []string) string {
	if len(labels) == 0 {
		return name
	}
	return name + "{" + strings.Join(labels, ",") + "}"
}

// checkFamilies applies scanSamples' rules to decoded families (protobuf,
// which has no lines): at most MaxSeries series, none twice in a family.
func checkFamilies(fams []*dto.MetricFamily) error {
	n := 0
	for _, f := range fams {
		seen := map[string]bool{}
		for _, m := range f.GetMetric() {
			if n++; n > MaxSeries {
				return fmt.Errorf("more than %d series (scrape.MaxSeries)", MaxSeries)
			}
			key := groupKey(m, nil)
			if seen[key] {
				return fmt.Errorf("duplicate series %s{%s}: Prometheus rejects such a scrape", f.GetName(), strings.NewReplacer("\xff", "=", "\xfe", ",").Replace(key))
			}
			seen[key] = true
		}
	}
	return nil
}

// adoptHistograms recognises histograms written without a "# TYPE x
// histogram" line (a `grep vllm:` capture keeps only the samples): an
// untyped family x_bucket whose every series has an le label, with untyped
// x_count or x_sum beside it and no family x, becomes the histogram x, as
// the TYPE line would have made it.
func adoptHistograms(fams []*dto.MetricFamily) []*dto.MetricFamily {
	byName := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	untyped := func(name string) *dto.MetricFamily {
		if f := byName[name]; f != nil && f.GetType() == dto.MetricType_UNTYPED {
			return f
		}
		return nil
	}
	drop := map[string]bool{}
	var adopted []*dto.MetricFamily
	for _, f := range fams {
		base, ok := strings.CutSuffix(f.GetName(), "_bucket")
		if !ok || f.GetType() != dto.MetricType_UNTYPED || byName[base] != nil || len(f.GetMetric()) == 0 {
			continue
		}
		counts, sums := untyped(base+"_count"), untyped(base+"_sum")
		if counts == nil && sums == nil {
			continue
		}
		h, ok := histogramFrom(base, f, counts, sums)
		if !ok {
			continue
		}
		adopted = append(adopted, h)
		drop[f.GetName()] = true
		if counts != nil {
			drop[counts.GetName()] = true
		}
		if sums != nil {
			drop[sums.GetName()] = true
		}
	}
	if len(adopted) == 0 {
		return fams
	}
	out := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		if !drop[f.GetName()] {
			out = append(out, f)
		}
	}
	out = append(out, adopted...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// histogramFrom builds the histogram family base from untyped bucket, count
// and sum families; ok is false when a bucket has no readable le.
func histogramFrom(base string, buckets, counts, sums *dto.MetricFamily) (*dto.MetricFamily, bool) {
	type series struct {
		labels []*dto.LabelPair
		h      *dto.Histogram
	}
	groups := map[string]*series{}
	var order []string
	get := func(m *dto.Metric, skipLe bool) *series {
		var labels []*dto.LabelPair
		for _, l := range m.GetLabel() {
			if !(skipLe && l.GetName() == "le") {
				labels = append(labels, l)
			}
		}
		key := groupKey(&dto.Metric{Label: labels}, nil)
		s := groups[key]
		if s == nil {
			s = &series{labels: labels, h: &dto.Histogram{}}
			groups[key] = s
			order = append(order, key)
		}
		return s
	}
	for _, m := range buckets.GetMetric() {
		le, ok := labelValue(m, "le")
		if !ok {
			return nil, false
		}
		ub, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return nil, false
		}
		v, _ := scalarValue(m)
		s := get(m, true)
		s.h.Bucket = append(s.h.Bucket, &dto.Bucket{UpperBound: &ub, CumulativeCountFloat: &v})
	}
	for _, m := range counts.GetMetric() {
		v, _ := scalarValue(m)
		get(m, false).h.SampleCountFloat = &v
	}
	for _, m := range sums.GetMetric() {
		v, _ := scalarValue(m)
		get(m, false).h.SampleSum = &v
	}
	name := base
	typ := dto.MetricType_HISTOGRAM
	f := &dto.MetricFamily{Name: &name, Type: &typ}
	for _, k := range order {
		s := groups[k]
		if len(s.h.Bucket) == 0 {
			return nil, false // a count or sum without buckets: not this histogram's
		}
		if s.h.SampleCountFloat == nil {
			// A capture without _count: the +Inf bucket is the count.
			for _, b := range s.h.Bucket {
				if math.IsInf(b.GetUpperBound(), +1) {
					c := b.GetCumulativeCountFloat()
					s.h.SampleCountFloat = &c
				}
			}
		}
		f.Metric = append(f.Metric, &dto.Metric{Label: s.labels, Histogram: s.h})
	}
	return f, true
}
