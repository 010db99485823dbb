package workload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
	"github.com/llmbench-org/llmbench/scenarios"
)

// traceRow is one request of a trace: when it arrived (from the trace's
// first request) and its lengths; hashIDs name the prompt's blocks
// (Mooncake), equal ids meaning equal prompt text.
type traceRow struct {
	at            time.Duration
	input, output int
	hashIDs       []int64
	images        int // images of the request (azure_multimodal), its input counting them
}

// parseTrace reads a trace file. Rows whose input or output length is 0
// (BurstGPT logs failed requests so) are skipped and counted; timestamps
// must not go backwards.
func parseTrace(format, name string, r io.Reader) (rows []traceRow, skipped int, err error) {
	switch format {
	case scenarios.TraceMooncake:
		rows, skipped, err = parseMooncake(name, r)
	case scenarios.TraceAzure:
		rows, skipped, err = parseTraceCSV(name, r, azureColumns)
	case scenarios.TraceBurstGPT:
		rows, skipped, err = parseTraceCSV(name, r, burstGPTColumns)
	case scenarios.TraceAzureMultimodal:
		rows, skipped, err = parseTraceCSV(name, r, azureMultimodalColumns)
	default:
		return nil, 0, fmt.Errorf("%s: unknown trace format %q", name, format)
	}
	if err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, skipped, fmt.Errorf("%s: no requests in the trace (%d rows skipped with a zero length)", name, skipped)
	}
	first := rows[0].at
	for i := range rows {
		rows[i].at -= first
	}
	return rows, skipped, nil
}

type mooncakeRow struct {
	Timestamp    *float64 `json:"timestamp"` // milliseconds
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
}

func parseMooncake(name string, r io.Reader) (rows []traceRow, skipped int, err error) {
	lr := newLineReader(name, r)
	var prev time.Duration
	for lr.Next() {
		line := lr.Line()
		text := bytes.TrimSpace(lr.Bytes())
		if len(text) == 0 {
			continue
		}
		var r mooncakeRow
		if err := json.Unmarshal(text, &r); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %w", name, line, jsonLineError(err))
		}
		// In a fixed order: the same file gets the same message every time.
		for _, f := range []struct {
			name    string
			missing bool
		}{{"timestamp", r.Timestamp == nil}, {"input_length", r.InputLength == nil}, {"output_length", r.OutputLength == nil}} {
			if f.missing {
				return nil, 0, fmt.Errorf("%s:%d: missing %q", name, line, f.name)
			}
		}
		if *r.Timestamp < 0 || *r.Timestamp > maxTraceSeconds*1000 || *r.InputLength < 0 || *r.OutputLength < 0 {
			return nil, 0, fmt.Errorf("%s:%d: timestamp out of range [0, %g] ms, or a negative length", name, line, float64(maxTraceSeconds*1000))
		}
		if err := errors.Join(checkTokens("input_length", *r.InputLength), checkTokens("output_length", *r.OutputLength)); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		at := time.Duration(math.Round(*r.Timestamp * float64(time.Millisecond)))
		if len(rows) > 0 && at < prev {
			return nil, 0, fmt.Errorf("%s:%d: timestamp %gms goes back before the previous row's", name, line, *r.Timestamp)
		}
		prev = at
		if *r.InputLength == 0 || *r.OutputLength == 0 {
			skipped++
			continue
		}
		rows = append(rows, traceRow{at: at, input: *r.InputLength, output: *r.OutputLength, hashIDs: r.HashIDs})
	}
	if err := lr.Err(); err != nil {
		return nil, 0, err
	}
	return rows, skipped, nil
}

// maxTraceSeconds bounds trace timestamps (about 31 years) so offsets fit a time.Duration.
const maxTraceSeconds = 1e9

// csvColumns says which header names carry a CSV trace's fields and how its
// timestamps read.
type csvColumns struct {
	timestamp, input, output string
	images                   string // "": the trace has no image counts
	parseTime                func(string) (time.Duration, error)
}

var azureColumns = csvColumns{
	timestamp: "timestamp", input: "contexttokens", output: "generatedtokens",
	parseTime: parseAzureTime,
}

// azureMultimodalColumns: the Azure LMM inference trace 2025, whose
// ContextTokens count text and image tokens together.
var azureMultimodalColumns = csvColumns{
	timestamp: "timestamp", input: "contexttokens", output: "generatedtokens", images: "numimages",
	parseTime: parseAzureTime,
}

var burstGPTColumns = csvColumns{
	timestamp: "timestamp", input: "request tokens", output: "response tokens",
	parseTime: func(s string) (time.Duration, error) {
		sec, err := strconv.ParseFloat(s, 64)
		if err != nil || !(sec >= 0 && sec <= maxTraceSeconds) { // NaN is neither
			return 0, fmt.Errorf("want seconds from 0 to %g, got %q", float64(maxTraceSeconds), s)
		}
		return time.Duration(math.Round(sec * 1e9)), nil
	},
}

// azureLayouts are the timestamp forms of the Azure LLM inference traces
// (2023: "2023-11-16 18:15:46.6805900"; 2024 adds a zone offset).
var azureLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

// azureEpoch anchors Azure wall-clock timestamps; only differences matter.
var azureEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func parseAzureTime(s string) (time.Duration, error) {
	for _, layout := range azureLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1970 || t.Year() > 2200 {
				return 0, fmt.Errorf("timestamp %q is out of range (years 1970 to 2200)", s)
			}
			return t.Sub(azureEpoch), nil
		}
	}
	return 0, fmt.Errorf("want a timestamp such as \"2023-11-16 18:15:46.6805900\", got %q", s)
}

func parseTraceCSV(name string, rd io.Reader, cols csvColumns) (rows []traceRow, skipped int, err error) {
	// Streamed record by record, each within the bound on one (a quoted
	// field may run over many lines, or never end).
	rs := inputfile.NewRecords(rd, name, inputfile.Data)
	r := csv.NewReader(rs)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, 0, csvError(name, err)
	}
	header = slices.Clone(header)
	index := map[string]int{}
	for i, h := range header {
		index[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	var at [4]int
	names := []string{cols.timestamp, cols.input, cols.output}
	if cols.images != "" {
		names = append(names, cols.images)
	}
	for i, col := range names {
		j, ok := index[col]
		if !ok {
			return nil, 0, fmt.Errorf("%s:1: header has no %q column (got %q)", name, col, strings.Join(header, ","))
		}
		at[i] = j
	}
	var prev time.Duration
	for {
		rs.Mark(r.InputOffset())
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, csvError(name, err)
		}
		line, _ := r.FieldPos(0)
		field := func(i int) string {
			if i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ts, err := cols.parseTime(field(at[0]))
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %s: %w", name, line, header[at[0]], err)
		}
		lengths := [3]int{}
		for k, i := range at[1:len(names)] {
			n, err := strconv.Atoi(field(i))
			if err != nil || n < 0 {
				what := "a token count"
				if k == 2 {
					what = "an image count"
				}
				return nil, 0, fmt.Errorf("%s:%d: %s: want %s ≥ 0, got %q", name, line, header[i], what, field(i))
			}
			if err := checkTokens(header[i], n); err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			lengths[k] = n
		}
		if len(rows) > 0 && ts < prev {
			return nil, 0, fmt.Errorf("%s:%d: %s goes back before the previous row's", name, line, header[at[0]])
		}
		prev = ts
		if lengths[0] == 0 || lengths[1] == 0 {
			skipped++
			continue
		}
		if lengths[2] > scenarios.MaxImagesPerRequest {
			return nil, 0, fmt.Errorf("%s:%d: %s: %d images, want at most %d", name, line, header[at[3]], lengths[2], scenarios.MaxImagesPerRequest)
		}
		rows = append(rows, traceRow{at: ts, input: lengths[0], output: lengths[1], images: lengths[2]})
	}
	return rows, skipped, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	var be *inputfile.BoundError
	if errors.As(err, &be) {
		return err
	}
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: invalid CSV: %v", name, pe.Line, pe.Err)
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty file: want a header line", name)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// traceRows is the dataset of a trace replay: request i is row i. Its prompt
// is one user message of exactly input words: the text of its hash_ids'
// blocks (blockSize words each, the same text for the same id in every
// request, so shared ids are shared prefixes), cut to input words, then
// words of its own if the blocks are too few.
type traceRows struct {
	seed      int64
	rows      []traceRow
	blockSize int
	images    traceImages // azure_multimodal: each row's images
}

func (t *traceRows) request(i int) ([]Message, int, int) {
	row := t.rows[i%len(t.rows)]
	row.input = t.images.textTokens(row)
	text := make([]byte, 0, row.input*6)
	n := 0
	for _, h := range row.hashIDs {
		if n >= row.input {
			break
		}
		take := min(t.blockSize, row.input-n)
		if n > 0 {
			text = append(text, ' ')
		}
		text = appendWords(text, newRand(t.seed, streamBlock, uint64(h)), take)
		n += take
	}
	if n < row.input {
		if n > 0 {
			text = append(text, ' ')
		}
		text = appendWords(text, newRand(t.seed, streamRequest, uint64(i)), row.input-n)
	}
	return []Message{{Role: "user", Content: string(text), Images: t.images.of(i, row)}}, row.input, row.output
}
