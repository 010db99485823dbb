package workload

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/scenarios"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLengthDistributions(t *testing.T) {
	t.Parallel()
	const n = 50_000
	tests := []struct {
		name       string
		l          scenarios.Length
		mean, sd   float64 // expected moments of the drawn lengths
		min, max   int
		meanTol    float64 // relative
		sdTol      float64 // relative
		checkMoves bool
	}{
		{name: "normal", l: scenarios.Length{Dist: "normal", Mean: 500, StdDev: 100, Min: 1}, mean: 500, sd: 100, min: 1, meanTol: 0.01, sdTol: 0.02},
		{name: "lognormal", l: scenarios.Length{Dist: "lognormal", Mean: 400, StdDev: 250, Min: 1}, mean: 400, sd: 250, min: 1, meanTol: 0.02, sdTol: 0.05},
		{name: "normal clamped", l: scenarios.Length{Dist: "normal", Mean: 100, StdDev: 80, Min: 50, Max: 150}, min: 50, max: 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := newLengthDist(tt.l, nil)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var sum, sumSq float64
			for range n {
				v := d.draw(rng)
				if v < tt.min || (tt.max > 0 && v > tt.max) {
					t.Fatalf("drew %d outside [%d, %d]", v, tt.min, tt.max)
				}
				sum += float64(v)
				sumSq += float64(v) * float64(v)
			}
			mean := sum / n
			sd := math.Sqrt(sumSq/n - mean*mean)
			if tt.mean > 0 && math.Abs(mean/tt.mean-1) > tt.meanTol {
				t.Errorf("mean %.2f, want %g ±%g%%", mean, tt.mean, tt.meanTol*100)
			}
			if tt.sd > 0 && math.Abs(sd/tt.sd-1) > tt.sdTol {
				t.Errorf("stddev %.2f, want %g ±%g%%", sd, tt.sd, tt.sdTol*100)
			}
		})
	}
}

func TestEmpiricalHistogram(t *testing.T) {
	t.Parallel()
	read := func(name string) (io.ReadCloser, error) { return os.Open("testdata/" + name) }
	d, err := newLengthDist(scenarios.Length{Dist: "empirical", File: "lengths.csv"}, read)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[int]int{}
	for range 30_000 {
		counts[d.draw(rng)]++
	}
	if len(counts) != 2 || math.Abs(float64(counts[100])/30_000-2.0/3) > 0.015 {
		t.Errorf("lengths.csv (16 ×1, 100 ×2): drew %v", counts)
	}

	bins, err := newLengthDist(scenarios.Length{Dist: "empirical", File: "bins.csv"}, read)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for range 20_000 {
		seen[bins.draw(rng)]++
	}
	for v := range seen {
		if v < 11 || v > 21 {
			t.Fatalf("drew %d: bins.csv gives weight only to 11–20 and 21", v)
		}
	}
	if len(seen) != 11 || math.Abs(float64(seen[21])/20_000-0.25) > 0.015 {
		t.Errorf("bins.csv: drew %v, want 11–20 (weight 3) and 21 (weight 1)", seen)
	}
}

func TestMalformedFilesNameFileAndLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		parse func() error
		want  string
	}{
		{"histogram weight", func() error {
			_, err := parseHistogram("bad-weight.csv", bytes.NewReader(readTestdata(t, "bad-weight.csv")))
			return err
		}, `bad-weight.csv:2: want a weight ≥ 0, got "-2"`},
		{"histogram fields", func() error {
			_, err := parseHistogram("h.csv", bytes.NewReader([]byte("1,2,3,4\n")))
			return err
		}, `h.csv:1: want "tokens,weight" or "min,max,weight", got 4 fields`},
		{"histogram empty", func() error {
			_, err := parseHistogram("h.csv", bytes.NewReader([]byte("# nothing\n")))
			return err
		}, `h.csv: no bins with a positive weight`},
		{"sharegpt record type", func() error {
			_, _, err := parseShareGPT("sharegpt-bad.json", bytes.NewReader(readTestdata(t, "sharegpt-bad.json")), true)
			return err
		}, `record 1: sharegpt-bad.json:3: conversations: want a list, got a JSON object`},
		{"sharegpt not an array", func() error {
			_, _, err := parseShareGPT("s.json", bytes.NewReader([]byte(`{"id": 1}`)), true)
			return err
		}, `s.json:1: want a JSON array of ShareGPT records`},
		{"sharegpt truncated", func() error {
			_, _, err := parseShareGPT("s.json", bytes.NewReader([]byte("[\n{\"conversations\": [\n")), true)
			return err
		}, `s.json:3: invalid JSON: unexpected end of file`},
		{"jsonl role", func() error {
			_, err := parseJSONL("prompts-bad.jsonl", bytes.NewReader(readTestdata(t, "prompts-bad.jsonl")))
			return err
		}, `prompts-bad.jsonl:2: messages[0]: unknown role "wizard"`},
		{"jsonl syntax", func() error {
			_, err := parseJSONL("p.jsonl", bytes.NewReader([]byte("{\"prompt\": \"a\"}\n{\"prompt\": \n")))
			return err
		}, `p.jsonl:2: invalid JSON`},
		{"jsonl neither", func() error {
			_, err := parseJSONL("p.jsonl", bytes.NewReader([]byte(`{"max_tokens": 3}`)))
			return err
		}, `p.jsonl:1: want "messages" (a non-empty list) or "prompt"`},
		{"jsonl max_tokens", func() error {
			_, err := parseJSONL("p.jsonl", bytes.NewReader([]byte(`{"prompt": "a b", "max_tokens": "many"}`)))
			return err
		}, `p.jsonl:1: max_tokens: want an integer, got a JSON string`},
		{"mooncake backwards", func() error {
			_, _, err := parseTrace("mooncake", "mooncake-backwards.jsonl", bytes.NewReader(readTestdata(t, "mooncake-backwards.jsonl")))
			return err
		}, `mooncake-backwards.jsonl:2: timestamp 5ms goes back before the previous row's`},
		{"mooncake missing", func() error {
			_, _, err := parseTrace("mooncake", "m.jsonl", bytes.NewReader([]byte(`{"timestamp": 1, "input_length": 3}`)))
			return err
		}, `m.jsonl:1: missing "output_length"`},
		{"azure timestamp", func() error {
			_, _, err := parseTrace("azure", "azure-bad.csv", bytes.NewReader(readTestdata(t, "azure-bad.csv")))
			return err
		}, `azure-bad.csv:3: TIMESTAMP: want a timestamp such as "2023-11-16 18:15:46.6805900", got "yesterday"`},
		{"burstgpt column", func() error {
			_, _, err := parseTrace("burstgpt", "burstgpt-missing-column.csv", bytes.NewReader(readTestdata(t, "burstgpt-missing-column.csv")))
			return err
		}, `burstgpt-missing-column.csv:1: header has no "response tokens" column`},
		{"burstgpt count", func() error {
			_, _, err := parseTrace("burstgpt", "b.csv", bytes.NewReader([]byte("Timestamp,Request tokens,Response tokens\n1,2,x\n")))
			return err
		}, `b.csv:2: Response tokens: want a token count ≥ 0, got "x"`},
		{"csv quote", func() error {
			_, _, err := parseTrace("azure", "a.csv", bytes.NewReader([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023,1,2\n")))
			return err
		}, `a.csv:2: invalid CSV`},
		{"trace empty", func() error {
			_, _, err := parseTrace("burstgpt", "b.csv", bytes.NewReader([]byte("Timestamp,Request tokens,Response tokens\n1,0,0\n")))
			return err
		}, `b.csv: no requests in the trace (1 rows skipped with a zero length)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.parse()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestShareGPT(t *testing.T) {
	t.Parallel()
	list, skipped, err := parseShareGPT("sharegpt.json", bytes.NewReader(readTestdata(t, "sharegpt.json")), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []record{
		{msgs: []Message{{Role: "user", Content: "What is the capital of France?"}}, tokens: 6, maxTokens: 11},
		{msgs: []Message{{Role: "user", Content: "Name three primes."}}, tokens: 3, maxTokens: 3},
	}
	if diff := cmp.Diff(want, list, cmp.AllowUnexported(record{})); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if skipped != 2 {
		t.Errorf("skipped %d records, want 2 (no human turn, no answer)", skipped)
	}
	// With output_tokens set, a record without an answer is usable.
	if list, _, _ := parseShareGPT("sharegpt.json", bytes.NewReader(readTestdata(t, "sharegpt.json")), false); len(list) != 3 {
		t.Errorf("with an output override: %d records, want 3", len(list))
	}
}

func TestJSONLPrompts(t *testing.T) {
	t.Parallel()
	list, err := parseJSONL("prompts.jsonl", bytes.NewReader(readTestdata(t, "prompts.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	want := []record{
		{msgs: []Message{{Role: "user", Content: "Summarize the plot of Hamlet in two sentences."}}, tokens: 8, maxTokens: 60},
		{msgs: []Message{{Role: "system", Content: "You answer in French."}, {Role: "user", Content: "How are you today?"}}, tokens: 8},
		{msgs: []Message{{Role: "user", Content: "Write a haiku about load testing."}}, tokens: 6},
	}
	if diff := cmp.Diff(want, list, cmp.AllowUnexported(record{})); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	ds := newRecords(1, list, false, nil)
	for i, wantMax := range []int{60, defaultOutputTokens, defaultOutputTokens, 60} {
		_, tokens, maxTokens := ds.request(i)
		if maxTokens != wantMax || tokens != want[i%3].tokens {
			t.Errorf("request %d: %d prompt tokens, max_tokens %d; want %d, %d", i, tokens, maxTokens, want[i%3].tokens, wantMax)
		}
	}
	override := newRecords(1, list, false, fixedLength(7))
	if _, _, maxTokens := override.request(0); maxTokens != 7 {
		t.Errorf("output_tokens set: max_tokens %d, want 7 (the scenario's wins)", maxTokens)
	}
}

func TestTraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, file string
		want         []traceRow
		skipped      int
	}{
		{"mooncake", "mooncake.jsonl", []traceRow{
			{at: 0, input: 700, output: 40, hashIDs: []int64{0, 1}},
			{at: 1500 * time.Millisecond, input: 1100, output: 24, hashIDs: []int64{0, 2, 3}},
			{at: 4020500 * time.Microsecond, input: 650, output: 60, hashIDs: []int64{0, 1}},
			{at: 5 * time.Second, input: 30, output: 5},
		}, 1},
		{"azure", "azure.csv", []traceRow{
			{at: 0, input: 374, output: 44},
			{at: 4314579 * time.Microsecond, input: 396, output: 109},
			{at: 4519410 * time.Microsecond, input: 35, output: 5},
		}, 1},
		{"burstgpt", "burstgpt.csv", []traceRow{
			{at: 0, input: 472, output: 18},
			{at: 40 * time.Second, input: 1087, output: 230},
			{at: 113 * time.Second, input: 417, output: 276},
			{at: 1124 * time.Second, input: 1305, output: 477},
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			rows, skipped, err := parseTrace(tt.format, tt.file, bytes.NewReader(readTestdata(t, tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rows, cmp.AllowUnexported(traceRow{})); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if skipped != tt.skipped {
				t.Errorf("skipped %d rows, want %d", skipped, tt.skipped)
			}
		})
	}
}

// TestTracePromptsShareBlocks checks that requests sharing Mooncake hash_ids
// share exactly those blocks of prompt text, and nothing more.
func TestTracePromptsShareBlocks(t *testing.T) {
	t.Parallel()
	rows, _, err := parseTrace("mooncake", "mooncake.jsonl", bytes.NewReader(readTestdata(t, "mooncake.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	ds := &traceRows{seed: 4, rows: rows, blockSize: 512}
	texts := make([][]string, len(rows))
	for i, row := range rows {
		msgs, tokens, maxTokens := ds.request(i)
		texts[i] = strings.Fields(msgs[0].Content)
		if len(texts[i]) != row.input || tokens != row.input || maxTokens != row.output {
			t.Fatalf("request %d: %d words, %d tokens, max %d; want %d, %d", i, len(texts[i]), tokens, maxTokens, row.input, row.output)
		}
	}
	common := func(a, b []string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	// Rows 0 and 2 share blocks 0 and 1: 650 words (row 2's whole prompt).
	if got := common(texts[0], texts[2]); got != 650 {
		t.Errorf("rows 0 and 2 share %d leading words, want 650", got)
	}
	// Rows 0 and 1 share block 0 only: 512 words, then differ (a chance match of a few words is possible).
	if got := common(texts[0], texts[1]); got < 512 || got > 520 {
		t.Errorf("rows 0 and 1 share %d leading words, want 512", got)
	}
}

func TestSharedPrefixDataset(t *testing.T) {
	t.Parallel()
	ds := newSharedPrefix(7, 3, 2, 40, uniformLength{5, 9}, fixedLength(16))
	prefixes := map[string]int{}
	questions := map[string]bool{}
	for i := range 12 {
		msgs, tokens, maxTokens := ds.request(i)
		if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
			t.Fatalf("request %d: messages %+v", i, msgs)
		}
		if got := CountTokens(msgs); got != tokens || len(strings.Fields(msgs[0].Content)) != 40 || maxTokens != 16 {
			t.Fatalf("request %d: %d tokens counted, %d targeted", i, got, tokens)
		}
		if g, seen := prefixes[msgs[0].Content]; seen && g != i%3 {
			t.Fatalf("request %d shares its prefix with group %d, want group %d", i, g, i%3)
		}
		prefixes[msgs[0].Content] = i % 3
		questions[msgs[1].Content] = true
	}
	if len(prefixes) != 3 || len(questions) != 6 {
		t.Errorf("%d prefixes and %d questions in 12 requests; want 3 groups × 2 prompts, cycling", len(prefixes), len(questions))
	}
}

func TestMultiTurnHistoryGrows(t *testing.T) {
	t.Parallel()
	ds := newMultiTurn(3, 4, 10, uniformLength{3, 8}, uniformLength{2, 6})
	for conv := range 3 {
		var prev []Message
		for turn := range 4 {
			msgs, tokens, maxTokens := ds.request(conv*4 + turn)
			if got := CountTokens(msgs); got != tokens {
				t.Fatalf("conversation %d turn %d: %d tokens counted, %d targeted", conv, turn, got, tokens)
			}
			if len(msgs) != 2+2*turn || msgs[0].Role != "system" || msgs[len(msgs)-1].Role != "user" {
				t.Fatalf("conversation %d turn %d: %d messages", conv, turn, len(msgs))
			}
			if turn > 0 {
				// The history is the previous request plus the reply it asked for.
				if diff := cmp.Diff(prev, msgs[:len(prev)]); diff != "" {
					t.Fatalf("conversation %d turn %d does not extend turn %d:\n%s", conv, turn, turn-1, diff)
				}
				reply := msgs[len(prev)]
				if reply.Role != "assistant" {
					t.Fatalf("conversation %d turn %d: message after the history is %q", conv, turn, reply.Role)
				}
			}
			_ = maxTokens
			prev = msgs
		}
	}
	// The reply in turn t+1's history is as long as turn t's max_tokens.
	_, _, max0 := ds.request(0)
	msgs1, _, _ := ds.request(1)
	if got := len(strings.Fields(msgs1[2].Content)); got != max0 {
		t.Errorf("the planned reply has %d words, turn 0 asked for %d", got, max0)
	}
}
