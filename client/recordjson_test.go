package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sampleRecord is a successful streamed request of n one-token chunks, shaped
// like the built-in engine's: gaps of 8 to 10 ms after a 120 ms TTFT.
func sampleRecord(n int, seed uint64) Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	sent := 500*time.Millisecond + time.Duration(rng.Int64N(int64(time.Second)))
	r := Record{
		ID: fmt.Sprintf("out200-7-%d", seed), ServerID: fmt.Sprintf("out200-7-%d", seed), Index: int(seed), Phase: "main",
		Intended: sent - 20*time.Microsecond, Sent: sent, Wrote: sent + 20_689, Reused: true,
		FirstByte: sent + 12*time.Millisecond + 537_547, TokensPerChunkSource: ChunkTokensUsageTotal,
		TargetPromptTokens: 128, MaxTokens: n, PromptTokens: 128, OutputTokens: n, TokenSource: TokensFromUsage,
		FinishReason: "length", Status: 200,
	}
	at := sent + 120*time.Millisecond + time.Duration(rng.Int64N(int64(10*time.Millisecond)))
	r.FirstToken, r.FirstContent = at, at
	for range n {
		r.Chunks = append(r.Chunks, Chunk{At: at, Tokens: 1})
		at += 8*time.Millisecond + time.Duration(rng.Int64N(int64(2*time.Millisecond)))
	}
	r.End = at
	return r
}

// v1Line is how llmbench wrote a record before v2: encoding/json of the
// struct's own tags.
func v1Line(t testing.TB, r Record) []byte {
	b, err := json.Marshal((*recordFields)(&r))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refDecodeRecord is the reference: encoding/json into the line's shape.
func refDecodeRecord(line []byte) (Record, error) {
	var w recordJSON
	var r Record
	if err := json.Unmarshal(line, &w); err != nil {
		return r, err
	}
	err := w.record(&r)
	return r, err
}

// variedRecords covers what a line can hold: chunks of several tokens, of
// zero (old records), a gap that goes back, no chunks, text that needs
// escaping, llama.cpp's timings, the rare flags.
func variedRecords() []Record {
	multi := sampleRecord(5, 2)
	multi.Chunks[2].Tokens, multi.Chunks[4].Tokens = 3, 2
	zero := sampleRecord(3, 3)
	for i := range zero.Chunks {
		zero.Chunks[i].Tokens = 0
	}
	back := sampleRecord(3, 4)
	back.Chunks[2].At = back.Chunks[0].At - time.Microsecond
	// Two choices (n = 2), and the violations a response committed.
	choices := sampleRecord(6, 5)
	for i := range choices.Chunks {
		choices.Chunks[i].Choice = int32(i % 2)
	}
	choices.Choices = 2
	choices.Violations = []Violation{ViolationChunkAfterFinish, ViolationUsageBeyondCap}
	return []Record{
		sampleRecord(200, 1), multi, zero, back,
		{ID: "x-1", Index: 7, Sent: 1, End: 5, ErrorClass: ErrHTTPStatus, Status: 503,
			Error: "server said \"<busy>\" \u00e9\u2028\n\tbye & \x01", Retries: 2},
		{ID: "héllo", Phase: "phase \"two\"", Connected: 3, ConnectDur: 4, FirstByte: 5, End: 9, NoStream: true, NoDone: true,
			CachedTokens: 3, ReasoningTokens: 4, TokenSource: TokensFromChunks,
			Timings: &Timings{CacheN: 1, PromptN: 2, PromptMS: 3.25, PredictedPerSecond: 1e-7, DraftN: 5, DraftNAccepted: 4}},
		{},
		choices,
		// A pooling request (embeddings): its endpoint, inputs and results.
		{ID: "e-1", Sent: 2, End: 7, Status: 200, PromptTokens: 48, TokenSource: TokensFromUsage, Endpoint: "embeddings", Inputs: 8, Results: 8},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for i, want := range variedRecords() {
		line, err := json.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(line, []byte(`{"v":2,`)) || bytes.Contains(line, []byte(`"chunks":`)) {
			t.Fatalf("record %d: not a v2 line: %s", i, line)
		}
		if !json.Valid(line) {
			t.Fatalf("record %d: invalid JSON %s", i, line)
		}
		var fast, viaJSON Record
		if err := DecodeRecord(line, &fast); err != nil {
			t.Fatalf("record %d: %v\n%s", i, err, line)
		}
		if err := json.Unmarshal(line, &viaJSON); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		for _, got := range []Record{fast, viaJSON} {
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("record %d round trip (-want +got):\n%s\n%s", i, d, line)
			}
		}
		// The same record in v1 reads the same.
		var old Record
		if err := DecodeRecord(v1Line(t, want), &old); err != nil || !cmp.Equal(want, old) {
			t.Fatalf("record %d from v1: %v %s", i, err, cmp.Diff(want, old))
		}
	}
}

// TestRecordV2Size: a 200-chunk record of one-token chunks 8 to 10 ms apart
// (the built-in engine's pace) takes at least 3 times fewer bytes in v2.
func TestRecordV2Size(t *testing.T) {
	r := sampleRecord(200, 1)
	v1, v2 := len(v1Line(t, r)), len(r.AppendJSON(nil))
	if float64(v1)/float64(v2) < 3 {
		t.Errorf("v1 %d bytes, v2 %d: %.2f× smaller, want 3×", v1, v2, float64(v1)/float64(v2))
	}
}

// TestRecordEveryField fails when a field is added to Record without
// teaching recordjson.go its key: each field is set alone, and must show in
// the line under its tag and come back.
func TestRecordEveryField(t *testing.T) {
	typ := reflect.TypeFor[Record]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var r Record
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("s")
		case reflect.Int, reflect.Int64:
			v.SetInt(42)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			if f.Type == reflect.TypeFor[[]Violation]() {
				v.Set(reflect.ValueOf([]Violation{ViolationUsageBackwards, "other"}))
				break
			}
			v.Set(reflect.ValueOf([]Chunk{{At: 5, Tokens: 2, Choice: 1}}))
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
		}
		line := r.AppendJSON(nil)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Name == "Chunks" {
			key = "chunk_dt_ns"
		}
		if !bytes.Contains(line, []byte(`"`+key+`":`)) {
			t.Errorf("field %s: key %q missing from %s", f.Name, key, line)
		}
		var got Record
		if err := DecodeRecord(line, &got); err != nil || !cmp.Equal(r, got) {
			t.Errorf("field %s: %v %s", f.Name, err, cmp.Diff(r, got))
		}
	}
}

func TestRecordRefusals(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"v":3,"id":"a"}`, `record "a" is in format v3; this llmbench reads v1 to v2`},
		{`{"v":-1,"id":"a"}`, `format v-1`},
		{`{"v":2,"id":"a","chunk_dt_ns":[1,2],"chunk_tokens":[1]}`, `record "a" has 1 chunk_tokens for 2 chunk_dt_ns`},
		{`{"v":2,"id":"a","chunk_tokens":[1]}`, `has 1 chunk_tokens for 0 chunk_dt_ns`},
		{`{"id":"a","chunks":[{"at_ns":1}],"chunk_dt_ns":[1]}`, `both chunks (v1) and chunk_dt_ns (v2)`},
		{`{"v":2,"id":"a","chunk_dt_ns":[1,2.5]}`, `cannot unmarshal number 2.5`},
		{`{"v":2,"id":"a","chunk_dt_ns":[1,2]`, `unexpected end of JSON input`},
		{`{"v":2,"id":"a"} x`, `invalid character 'x' after top-level value`},
	} {
		var r Record
		err := DecodeRecord([]byte(tc.line), &r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.line, err, tc.want)
		}
		if _, refErr := refDecodeRecord([]byte(tc.line)); fmt.Sprint(refErr) != fmt.Sprint(err) {
			t.Errorf("%s: %v; encoding/json says %v", tc.line, err, refErr)
		}
	}
}

// TestDecodeRecordReuse: decoding into a reused Record replaces every field
// (nothing of the previous line is left) and reuses the chunk array.
func TestDecodeRecordReuse(t *testing.T) {
	recs := variedRecords()
	var r Record
	for _, order := range [][]int{{0, 4, 1, 5, 0, 6, 2}, {5, 0, 0, 3}} {
		for _, i := range order {
			if err := DecodeRecord(recs[i].AppendJSON(nil), &r); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(recs[i], r); d != "" {
				t.Fatalf("record %d decoded into a reused Record (-want +got):\n%s", i, d)
			}
		}
	}
	line := recs[0].AppendJSON(nil)
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodeRecord(line, &r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the id; everything else is reused or interned
		t.Errorf("DecodeRecord into a reused Record allocated %v times per line", allocs)
	}
}

var recordSeeds = []string{
	`{"v":2,"id":"a","chunk_dt_ns":[5,1,-2],"chunk_tokens":[1,0,3],"end_ns":9}`,
	`{"id":"a","chunks":[{"at_ns":5,"tokens":1},{"tokens":2,"at_ns":7},{}],"reused":false}`,
	` { "v" : 2 , "id" : "a" , "chunk_dt_ns" : [ 1 , 2 ] } `,
	`{"v":2,"id":"a","chunk_dt_ns":[1],"chunk_dt_ns":[2,3]}`,
	`{"v":2,"ID":"a","Chunk_Dt_Ns":[1]}`,
	`{"v":2,"id":"a\u00e9","error":"x\"y","timings":{"prompt_n":3,"prompt_ms":1.5}}`,
	`{"v":2,"timings":{"prompt_n":3},"timings":{"draft_n":1}}`,
	`{"v":2,"timings":null,"chunks":null,"id":null}`,
	`{"v":2,"index":01}`,
	`{"v":2,"index":1e3}`,
	`{"v":2,"index":-0,"status":99999999999999999999}`,
	`{"chunks":[{"at_ns":1,"tokens":2147483648}]}`,
	`{"v":2,"chunk_tokens":[1],"chunk_dt_ns":[1]}`,
	// chunk_tokens read by the one-digit path, and beside it.
	`{"v":2,"chunk_dt_ns":[1,2,3],"chunk_tokens":[9,0,1]}`,
	`{"v":2,"chunk_dt_ns":[1,2,3],"chunk_tokens":[2,12,1]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_tokens":[2 ,1]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_tokens":[2,-1]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_tokens":[2,1.5]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_tokens":[2,1,3]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_tokens":[2,1`,
	`{"v":2,"chunk_dt_ns":[1],"chunk_tokens":[]}`,
	// chunk_dt_ns read eight bytes at a time, and beside it.
	`{"v":2,"chunk_dt_ns":[1234567890,7000000,6999999,01,5],"end_ns":1}`,
	`{"v":2,"chunk_dt_ns":[1234567890,7000000,12345678,0,-5,1234567,]}`,
	`{"v":2,"chunk_dt_ns":[7000000,7000000 ,7000000,7000000.5,7]}`,
	`{"v":2,"chunk_dt_ns":[7000000,7000000,7000000,7000000]}`,
	`{"v":2,"id":"\xff"}`,
	`{"v":2,"reused":true,"no_done":false,"no_stream":tru}`,
	`{}`, `null`, `[]`, `{"v":2,}`, ``, `{"unknown":1}`,
	// Issue 21: choices, violations, chunk_choice.
	`{"v":2,"id":"a","chunk_dt_ns":[1,2,3],"chunk_choice":[0,1,0],"choices":2,"violations":["chunk_after_finish","usage_backwards"]}`,
	`{"v":2,"chunk_dt_ns":[1,2],"chunk_choice":[0,1,1]}`,
	`{"v":2,"chunk_choice":[1],"chunk_dt_ns":[1]}`,
	`{"v":2,"chunk_dt_ns":[1],"chunk_choice":[1],"chunk_choice":[0]}`,
	`{"v":2,"chunk_dt_ns":[1],"chunk_tokens":[2],"chunk_choice":[2147483648]}`,
	`{"v":2,"violations":[]}`, `{"v":2,"violations":null}`, `{"v":2,"violations":["x\u0041",1]}`,
	`{"v":2,"violations":["usage_negative"],"violations":["other"]}`,
	`{"id":"a","chunks":[{"at_ns":1,"choice":3},{"at_ns":2,"tokens":2,"choice":-1}]}`,
}

// FuzzDecodeRecord holds the fast decoder to encoding/json: for any input,
// both fail with the same error or give the same record; json.Unmarshal into
// a Record (through UnmarshalJSON) agrees as well.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range recordSeeds {
		f.Add([]byte(s))
	}
	for _, r := range variedRecords()[1:] {
		f.Add(r.AppendJSON(nil))
		f.Add(v1Line(f, r))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, wantErr := refDecodeRecord(line)
		var got Record
		err := DecodeRecord(line, &got)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("DecodeRecord(%q): error %v; encoding/json: %v", line, err, wantErr)
		}
		if err == nil && !cmp.Equal(want, got) {
			t.Fatalf("DecodeRecord(%q) (-encoding/json +fast):\n%s", line, cmp.Diff(want, got))
		}
		// Into a used Record: the same answer.
		used := sampleRecord(3, 9)
		if err2 := DecodeRecord(line, &used); fmt.Sprint(err2) != fmt.Sprint(wantErr) || (err2 == nil && !cmp.Equal(want, used)) {
			t.Fatalf("DecodeRecord(%q) into a used record: %v %s", line, err2, cmp.Diff(want, used))
		}
		// With its strings in an arena: the same answer.
		var arena StringArena
		var inArena Record
		if err3 := DecodeRecordStrings(line, &inArena, &arena); fmt.Sprint(err3) != fmt.Sprint(wantErr) || (err3 == nil && !cmp.Equal(want, inArena)) {
			t.Fatalf("DecodeRecordStrings(%q): %v %s", line, err3, cmp.Diff(want, inArena))
		}
		var viaJSON Record
		errJSON := json.Unmarshal(line, &viaJSON)
		if (errJSON == nil) != (err == nil) {
			t.Fatalf("json.Unmarshal(%q) into a Record: %v; DecodeRecord: %v", line, errJSON, err)
		}
		if errJSON == nil && string(bytes.TrimSpace(line)) != "null" && !cmp.Equal(want, viaJSON) {
			t.Fatalf("json.Unmarshal(%q) into a Record (-want +got):\n%s", line, cmp.Diff(want, viaJSON))
		}
		// What decodes writes back to a line that decodes to the same record.
		if err == nil {
			var again Record
			if err := DecodeRecord(got.AppendJSON(nil), &again); err != nil || !cmp.Equal(got, again) {
				t.Fatalf("re-encoding %q: %v %s", line, err, cmp.Diff(got, again))
			}
		}
	})
}

// Strings made in a StringArena keep their bytes as the arena moves on to
// new blocks, whatever their length (empty, longer than a block allows).
func TestStringArenaKeepsEveryString(t *testing.T) {
	var a StringArena
	var want, got []string
	for i := range 20_000 {
		s := strings.Repeat(strconv.Itoa(i), i%7)
		if i%1000 == 0 {
			s = strings.Repeat("x", arenaBlock) // allocated alone
		}
		b := []byte(s)
		got = append(got, a.String(b))
		clear(b) // the arena holds a copy
		want = append(want, s)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d: %.20q, want %.20q", i, got[i], want[i])
		}
	}
	var none *StringArena
	if s := none.String([]byte("id")); s != "id" {
		t.Errorf("a nil arena made %q", s)
	}
}
