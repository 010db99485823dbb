package client

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// RecordVersion is the format of the record lines this llmbench writes
// (requests.jsonl; docs/decisions/0206-compact-records.md):
//
//   - v1 (lines without "v"): every chunk an object,
//     "chunks":[{"at_ns":…,"tokens":…},…].
//   - v2 ("v":2, the first key of every line): "chunk_dt_ns" holds the first
//     chunk's arrival on the run clock, then each chunk's gap to the one
//     before, all in integer nanoseconds; "chunk_tokens" holds each chunk's
//     token count, and is left out when every chunk carried exactly one;
//     "chunk_choice" holds each chunk's choice (n > 1), and is left out
//     when every chunk is choice 0 (added in issue 21, v2 all the same: a
//     reader that does not know it reads the line as encoding/json does,
//     and older lines simply lack it).
//
// The version is on every line, so a file appended to by two versions (or a
// merge of shards of both) still reads; a reader refuses a line whose version
// is newer than it knows rather than misread it.
const RecordVersion = 2

// recordFields is Record without its methods, so encoding/json decodes it
// field by field (a Record would call its own UnmarshalJSON again).
type recordFields Record

// recordJSON is a record line of any version as encoding/json sees it: the
// reference decoding, and the fallback of the fast one for anything unusual.
type recordJSON struct {
	V int `json:"v,omitempty"`
	recordFields
	ChunkDtNs   []int64 `json:"chunk_dt_ns,omitempty"`
	ChunkTokens []int32 `json:"chunk_tokens,omitempty"`
	ChunkChoice []int32 `json:"chunk_choice,omitempty"`
}

// MarshalJSON writes the record as one v2 line (without the newline).
func (r Record) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 512+10*len(r.Chunks))), nil
}

// AppendJSON appends the record's v2 JSON to dst: what MarshalJSON writes,
// without encoding/json's check and copy of it (the recorder writes one
// record at the end of every request).
func (r *Record) AppendJSON(dst []byte) []byte {
	b := append(dst, `{"v":`...)
	b = strconv.AppendInt(b, RecordVersion, 10)
	b = appendString(append(b, `,"id":`...), r.ID)
	if r.ServerID != "" {
		b = appendString(append(b, `,"server_id":`...), r.ServerID)
	}
	b = strconv.AppendInt(append(b, `,"index":`...), int64(r.Index), 10)
	if r.Phase != "" {
		b = appendString(append(b, `,"phase":`...), r.Phase)
	}
	if r.Session != "" {
		b = appendString(append(b, `,"session":`...), r.Session)
	}
	if r.TraceID != "" {
		b = appendString(append(b, `,"trace_id":`...), r.TraceID)
	}
	b = strconv.AppendInt(append(b, `,"intended_ns":`...), int64(r.Intended), 10)
	b = strconv.AppendInt(append(b, `,"sent_ns":`...), int64(r.Sent), 10)
	b = appendDuration(b, `,"wrote_ns":`, r.Wrote)
	b = appendDuration(b, `,"connected_ns":`, r.Connected)
	b = appendDuration(b, `,"connect_dur_ns":`, r.ConnectDur)
	b = strconv.AppendBool(append(b, `,"reused":`...), r.Reused)
	b = appendDuration(b, `,"first_byte_ns":`, r.FirstByte)
	b = appendDuration(b, `,"first_token_ns":`, r.FirstToken)
	b = strconv.AppendInt(append(b, `,"end_ns":`...), int64(r.End), 10)
	b = appendDuration(b, `,"first_content_ns":`, r.FirstContent)
	if len(r.Chunks) > 0 {
		b = append(b, `,"chunk_dt_ns":[`...)
		var prev time.Duration
		allOne, allZero := true, true
		for i, c := range r.Chunks {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(c.At-prev), 10)
			prev = c.At
			allOne = allOne && c.Tokens == 1
			allZero = allZero && c.Choice == 0
		}
		b = append(b, ']')
		if !allOne {
			b = append(b, `,"chunk_tokens":[`...)
			for i, c := range r.Chunks {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(c.Tokens), 10)
			}
			b = append(b, ']')
		}
		if !allZero {
			b = append(b, `,"chunk_choice":[`...)
			for i, c := range r.Chunks {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(c.Choice), 10)
			}
			b = append(b, ']')
		}
	}
	if r.TokensPerChunkSource != "" {
		b = appendString(append(b, `,"tokens_per_chunk_source":`...), string(r.TokensPerChunkSource))
	}
	b = appendInt(b, `,"target_prompt_tokens":`, r.TargetPromptTokens)
	b = appendInt(b, `,"max_tokens":`, r.MaxTokens)
	b = appendInt(b, `,"images":`, r.Images)
	b = strconv.AppendInt(append(b, `,"prompt_tokens":`...), int64(r.PromptTokens), 10)
	b = strconv.AppendInt(append(b, `,"output_tokens":`...), int64(r.OutputTokens), 10)
	b = appendInt(b, `,"cached_tokens":`, r.CachedTokens)
	if r.TokenSource != "" {
		b = appendString(append(b, `,"token_source":`...), string(r.TokenSource))
	}
	if r.FinishReason != "" {
		b = appendString(append(b, `,"finish_reason":`...), r.FinishReason)
	}
	b = appendInt(b, `,"status":`, r.Status)
	if r.ErrorClass != "" {
		b = appendString(append(b, `,"error_class":`...), string(r.ErrorClass))
	}
	if r.Error != "" {
		b = appendString(append(b, `,"error":`...), r.Error)
	}
	b = appendInt(b, `,"retries":`, r.Retries)
	b = appendDuration(b, `,"retry_idle_ns":`, r.RetryIdle)
	if r.ConnClose {
		b = append(b, `,"conn_close":true`...)
	}
	b = appendInt(b, `,"reasoning_tokens":`, r.ReasoningTokens)
	if r.Timings != nil {
		t, _ := json.Marshal(r.Timings) // plain numbers only: cannot fail
		b = append(append(b, `,"timings":`...), t...)
	}
	if r.NoDone {
		b = append(b, `,"no_done":true`...)
	}
	if r.NoStream {
		b = append(b, `,"no_stream":true`...)
	}
	if r.Wire != "" {
		b = appendString(append(b, `,"wire":`...), r.Wire)
	}
	b = appendInt(b, `,"choices":`, r.Choices)
	b = appendPooling(b, r)
	if r.Violations != nil {
		b = append(b, `,"violations":[`...)
		for i, v := range r.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(v))
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendDuration(b []byte, key string, d time.Duration) []byte {
	if d == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(d), 10)
}

func appendInt(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(n), 10)
}

// appendString appends s as a JSON string. Ids, phases and classes are plain
// ASCII and are copied as they are; anything else (an error message that
// quotes the server) is left to encoding/json's escaping.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// UnmarshalJSON reads a record line of either version (see RecordVersion).
// It replaces the whole record (encoding/json would merge into it), and
// leaves it as it is for null.
func (r *Record) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	r.Chunks = nil // never reuse the chunks of a record someone may still hold
	return DecodeRecord(data, r)
}

// DecodeRecord decodes one record line of either version into r, replacing
// all of *r. It answers as json.Unmarshal into the record would, the same
// record or the same error (FuzzDecodeRecord holds it to that), but reads the
// lines llmbench writes in one pass without allocating beyond the strings and
// the chunks; anything else (escapes in strings, unknown or repeated keys,
// numbers that are not plain integers, null, invalid JSON) is decoded by
// encoding/json.
//
// r.Chunks' backing array is reused when it is large enough: a caller that
// decodes line after line into one Record must copy the chunks it keeps
// (slices.Clone), or set r.Chunks to nil first.
func DecodeRecord(line []byte, r *Record) error { return DecodeRecordStrings(line, r, nil) }

// DecodeRecordStrings is DecodeRecord with the record's strings made in
// strs (nil: one allocation each).
func DecodeRecordStrings(line []byte, r *Record, strs *StringArena) error {
	ok, err := decodeRecordFast(line, r, strs)
	if ok {
		return err
	}
	var w recordJSON
	if err := json.Unmarshal(line, &w); err != nil {
		return err
	}
	return w.record(r)
}

// record converts the decoded line into r, checking the chunk arrays agree.
func (w *recordJSON) record(r *Record) error {
	if len(w.Chunks) > 0 && len(w.ChunkDtNs) > 0 {
		return fmt.Errorf("record %q has both chunks (v1) and chunk_dt_ns (v2)", w.ID)
	}
	if err := checkRecordForm(w.V, w.ID, len(w.ChunkDtNs), w.ChunkTokens != nil, len(w.ChunkTokens), w.ChunkChoice != nil, len(w.ChunkChoice)); err != nil {
		return err
	}
	*r = Record(w.recordFields)
	if len(w.ChunkDtNs) > 0 {
		r.Chunks = make([]Chunk, len(w.ChunkDtNs))
		var at time.Duration
		for i, dt := range w.ChunkDtNs {
			at += time.Duration(dt)
			r.Chunks[i] = Chunk{At: at, Tokens: 1}
			if w.ChunkTokens != nil {
				r.Chunks[i].Tokens = w.ChunkTokens[i]
			}
			if w.ChunkChoice != nil {
				r.Chunks[i].Choice = w.ChunkChoice[i]
			}
		}
	}
	if len(r.Chunks) == 0 {
		r.Chunks = nil
	}
	return nil
}

// checkRecordForm is the check both decodings make of a line's version and
// of its chunk arrays' lengths.
func checkRecordForm(version int, id string, dts int, hasTokens bool, tokens int, hasChoice bool, choices int) error {
	if version < 0 || version > RecordVersion {
		return fmt.Errorf("record %q is in format v%d; this llmbench reads v1 to v%d (a newer llmbench wrote it?)", id, version, RecordVersion)
	}
	if hasTokens && tokens != dts {
		return fmt.Errorf("record %q has %d chunk_tokens for %d chunk_dt_ns", id, tokens, dts)
	}
	if hasChoice && choices != dts {
		return fmt.Errorf("record %q has %d chunk_choice for %d chunk_dt_ns", id, choices, dts)
	}
	return nil
}

// recordScanner reads the subset of JSON llmbench writes. Each method
// reports false on anything outside it, and the caller hands the line to
// encoding/json.
type recordScanner struct {
	b []byte
	i int
}

func (s *recordScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *recordScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid UTF-8
// (encoding/json would replace invalid bytes).
func (s *recordScanner) str() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// int reads a plain JSON integer (no fraction, no exponent) of at most 18
// digits, which fits an int64 whatever its value.
func (s *recordScanner) int() (int64, bool) {
	neg := s.eat('-')
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (s *recordScanner) int32() (int32, bool) {
	n, ok := s.int()
	if !ok || n != int64(int32(n)) {
		return 0, false
	}
	return int32(n), true
}

func (s *recordScanner) bool() (v, ok bool) {
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// ints reads an array of integers with fn, and reports how many there were.
func (s *recordScanner) ints(fn func(i int, n int64) bool) (int, bool) {
	if !s.eat('[') {
		return 0, false
	}
	s.ws()
	if s.eat(']') {
		return 0, true
	}
	for i := 0; ; i++ {
		s.ws()
		n, ok := s.int()
		if !ok || !fn(i, n) {
			return 0, false
		}
		s.ws()
		if s.eat(']') {
			return i + 1, true
		}
		if !s.eat(',') {
			return 0, false
		}
	}
}

// gaps reads a v2 "chunk_dt_ns" array into chunks of one token, in buf
// when it is large enough. It is the loop a report spends its time in: one
// pass over the digits, the chunks sized once from the commas.
func (s *recordScanner) gaps(buf []Chunk) ([]Chunk, bool) {
	b := s.b
	i := s.i
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	i++
	// A reused array is appended to (it grows to the longest record once);
	// a new one is sized from the commas, at the cost of a pass over them.
	chunks := buf[:0]
	if cap(buf) == 0 {
		end := bytes.IndexByte(b[i:], ']')
		if end < 0 {
			return nil, false
		}
		chunks = make([]Chunk, 0, bytes.Count(b[i:i+end], []byte{','})+1)
	}
	var at time.Duration
	for first := true; ; first = false {
		// Most elements are 1 to 7 digits and a comma, read eight bytes at
		// a time here; the rest (the first, the last, a sign, spaces, a
		// longer number, anything wrong) goes on below.
		for ; i+8 <= len(b); first = false {
			w := binary.LittleEndian.Uint64(b[i:])
			digits := swarCount(w)
			if digits == 0 || digits == 8 || byte(w>>(8*digits)) != ',' || (digits > 1 && byte(w) == '0') {
				break
			}
			at += time.Duration(swarValue(w, digits))
			chunks = append(chunks, Chunk{At: at, Tokens: 1})
			i += digits + 1
		}
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if first && i < len(b) && b[i] == ']' {
			s.i = i + 1
			return chunks, true
		}
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		start := i
		var n int64
		if v, digits, ok := swarDigits(b[i:]); ok {
			n = v
			i += digits
		} else {
			for ; i < len(b); i++ {
				d := b[i] - '0'
				if d > 9 {
					break
				}
				n = n*10 + int64(d)
			}
		}
		digits := i - start
		if digits == 0 || digits > 18 || (digits > 1 && b[start] == '0') {
			return nil, false
		}
		if neg {
			n = -n
		}
		at += time.Duration(n)
		chunks = append(chunks, Chunk{At: at, Tokens: 1})
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if i < len(b) && b[i] == ']' {
			s.i = i + 1
			return chunks, true
		}
		if i >= len(b) || b[i] != ',' {
			return nil, false // also a fraction or an exponent
		}
		i++
	}
}

// tokens reads a v2 "chunk_tokens" array of one-digit counts written as
// llmbench writes them ([1,1,2,1], no spaces) into chunks, and says how many
// there were. Anything else (an empty array, spaces, a count of two digits)
// is not read (ok false, s unmoved), and the caller reads the array with
// ints, which answers the same for what tokens reads.
func (s *recordScanner) tokens(chunks []Chunk) (n int, ok bool) {
	b := s.b
	i := s.i
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	for i++; i+1 < len(b); i += 2 {
		d := b[i] - '0'
		if d > 9 {
			return 0, false
		}
		if n < len(chunks) {
			chunks[n].Tokens = int32(d)
		}
		n++
		switch b[i+1] {
		case ',':
		case ']':
			s.i = i + 2
			return n, true
		default:
			return 0, false
		}
	}
	return 0, false
}

// swarDigits parses the 1 to 7 decimal digits that start b, eight bytes at
// a time (a gap of 10 ms is 8 digits with its comma): ok is false when b is
// shorter than 8 bytes or starts with no digit or with 8, and the caller
// parses byte by byte.
func swarDigits(b []byte) (n int64, digits int, ok bool) {
	if len(b) < 8 {
		return 0, 0, false
	}
	w := binary.LittleEndian.Uint64(b)
	digits = swarCount(w)
	if digits == 0 || digits == 8 {
		return 0, 0, false
	}
	return swarValue(w, digits), digits, true
}

// swarCount is how many of the eight bytes of w (little-endian) are
// decimal digits before the first that is not.
func swarCount(w uint64) int {
	// A byte is a digit when its high nibble is 3 before and after adding
	// 6; a carry out of a byte only reaches the bytes after it, past the
	// first non-digit, which are not read.
	const ones, highs, zeros = 0x0101010101010101, 0xF0F0F0F0F0F0F0F0, 0x3030303030303030
	notDigit := (w&highs ^ zeros) | ((w+6*ones)&highs ^ zeros)
	return bits.TrailingZeros64(notDigit) / 8
}

// swarValue is the number the first digits (1 to 7) bytes of w spell.
func swarValue(w uint64, digits int) int64 {
	// The digits, as values, moved to the top bytes: the bytes shifted in
	// are leading zeros, the bytes after the digits fall off (so does the
	// borrow of the first non-digit's subtraction).
	const zeros = 0x3030303030303030
	x := (w - zeros) << (8 * (8 - digits))
	x = x*10 + x>>8 // pairs of digits
	x = ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return int64(x)
}

// count is an upper bound of how many elements the array that starts here
// holds, to size the chunks once: how many sep bytes it holds, plus one.
func (s *recordScanner) count(sep byte) int {
	n := 1
	for _, c := range s.b[s.i:] {
		if c == sep {
			n++
		} else if c == ']' {
			break
		}
	}
	return n
}

// chunkBuffer is buf emptied, or a new slice when buf cannot hold n chunks.
func chunkBuffer(buf []Chunk, n int) []Chunk {
	if cap(buf) < n {
		return make([]Chunk, 0, n)
	}
	return buf[:0]
}

// chunksV1 reads a v1 "chunks" array of {"at_ns":…,"tokens":…} objects.
func (s *recordScanner) chunksV1(chunks []Chunk) ([]Chunk, bool) {
	if !s.eat('[') {
		return nil, false
	}
	s.ws()
	if s.eat(']') {
		return chunks, true
	}
	for {
		s.ws()
		if !s.eat('{') {
			return nil, false
		}
		var c Chunk
		s.ws()
		if !s.eat('}') {
			for {
				s.ws()
				key, ok := s.str()
				if !ok {
					return nil, false
				}
				s.ws()
				if !s.eat(':') {
					return nil, false
				}
				s.ws()
				switch string(key) {
				case "at_ns":
					var n int64
					n, ok = s.int()
					c.At = time.Duration(n)
				case "tokens":
					c.Tokens, ok = s.int32()
				case "choice":
					c.Choice, ok = s.int32()
				default:
					ok = false
				}
				if !ok {
					return nil, false
				}
				s.ws()
				if s.eat('}') {
					break
				}
				if !s.eat(',') {
					return nil, false
				}
			}
		}
		chunks = append(chunks, c)
		s.ws()
		if s.eat(']') {
			return chunks, true
		}
		if !s.eat(',') {
			return nil, false
		}
	}
}

// object reads a JSON object's bytes (for timings, which encoding/json then
// decodes): braces are matched outside strings; encoding/json checks the
// rest.
func (s *recordScanner) object() ([]byte, bool) {
	start := s.i
	if !s.eat('{') {
		return nil, false
	}
	depth := 1
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch c {
		case '"':
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return s.b[start:s.i], true
			}
		}
	}
	return nil, false
}

// StringArena makes strings out of large shared blocks rather than one
// allocation each: a reader that keeps a million records (report.Load)
// keeps a few hundred blocks, which the collector marks once each, instead
// of two million strings (an id and a server id a record). A block is kept
// as long as any of its strings is: for strings kept together. The zero
// value is ready; it is not safe for concurrent use.
type StringArena struct{ block []byte }

// arenaBlock is the size of a StringArena's blocks; longer strings are
// allocated alone.
const arenaBlock = 64 << 10

// String returns b as a string in the arena (nil: allocated alone).
func (a *StringArena) String(b []byte) string {
	if a == nil || len(b) == 0 || len(b) > arenaBlock/16 {
		return string(b)
	}
	if cap(a.block)-len(a.block) < len(b) {
		a.block = make([]byte, 0, arenaBlock)
	}
	start := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[start], len(b))
}

// intern returns the string of b, without allocating when it is the value
// the record had before (DecodeRecord into a reused Record) or a common one,
// else made in strs.
func intern(b []byte, prev string, strs *StringArena) string {
	if string(b) == prev {
		return prev
	}
	switch string(b) {
	case "main":
		return "main"
	case "warmup":
		return "warmup"
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case string(TokensFromUsage):
		return string(TokensFromUsage)
	case string(TokensFromChunks):
		return string(TokensFromChunks)
	case string(ChunkTokensUsageGrowth):
		return string(ChunkTokensUsageGrowth)
	case string(ChunkTokensUsageTotal):
		return string(ChunkTokensUsageTotal)
	}
	for _, v := range Violations() {
		if string(b) == string(v) {
			return string(v)
		}
	}
	return strs.String(b)
}

// Bits of the keys decodeRecordFast has seen.
const (
	seenChunks = 1 << iota
	seenDt
	seenTokens
	seenTimings
	seenChoice
	seenViolations
)

// decodeRecordFast decodes the lines llmbench writes. ok is false when the
// line is anything else: the caller then decodes it with encoding/json.
func decodeRecordFast(line []byte, r *Record, strs *StringArena) (ok bool, err error) {
	d := recordDecoder{s: recordScanner{b: line}, r: r, prev: *r, strs: strs}
	*r = Record{}
	if !d.object() {
		return false, nil
	}
	if len(r.Chunks) == 0 {
		r.Chunks = nil
	}
	dts := 0
	if d.seen&seenDt != 0 {
		dts = len(r.Chunks)
	}
	return true, checkRecordForm(d.version, r.ID, dts, d.seen&seenTokens != 0, d.tokens, d.seen&seenChoice != 0, d.choices)
}

// recordDecoder is decodeRecordFast's state: the scanner over the line, the
// record it fills, and what the record held before (its strings and chunks
// are reused when the next line repeats them).
type recordDecoder struct {
	s       recordScanner
	r       *Record
	prev    Record
	strs    *StringArena
	version int
	seen    int // seenChunks etc.: the keys that may not repeat
	tokens  int // entries in chunk_tokens
	choices int // entries in chunk_choice
}

// object reads the line's one object, key after key, to its end; false on
// anything outside the subset llmbench writes, or a key encoding/json must
// decode (unknown, or repeated where it would merge). The keys are one
// switch in the loop, not a call each: it is the report's read path.
func (d *recordDecoder) object() bool {
	s, r, prev := &d.s, d.r, &d.prev
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if !s.eat('}') {
		for {
			key, ok := s.str()
			if !ok {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			var v []byte
			switch string(key) {
			case "v":
				ok = d.int(&d.version)
			case "id":
				ok = d.string(&r.ID, prev.ID)
			case "server_id":
				ok = d.string(&r.ServerID, r.ID)
			case "trace_id":
				ok = d.string(&r.TraceID, "")
			case "index":
				ok = d.int(&r.Index)
			case "phase":
				ok = d.string(&r.Phase, prev.Phase)
			case "session":
				ok = d.string(&r.Session, prev.Session)
			case "intended_ns":
				ok = d.duration(&r.Intended)
			case "sent_ns":
				ok = d.duration(&r.Sent)
			case "wrote_ns":
				ok = d.duration(&r.Wrote)
			case "connected_ns":
				ok = d.duration(&r.Connected)
			case "connect_dur_ns":
				ok = d.duration(&r.ConnectDur)
			case "reused":
				ok = d.bool(&r.Reused)
			case "first_byte_ns":
				ok = d.duration(&r.FirstByte)
			case "first_token_ns":
				ok = d.duration(&r.FirstToken)
			case "end_ns":
				ok = d.duration(&r.End)
			case "first_content_ns":
				ok = d.duration(&r.FirstContent)
			case "chunks", "chunk_dt_ns", "chunk_tokens", "chunk_choice", "timings", "violations":
				ok = d.arrays(key)
			case "tokens_per_chunk_source":
				v, ok = s.str()
				r.TokensPerChunkSource = ChunkTokenSource(intern(v, string(prev.TokensPerChunkSource), d.strs))
			case "target_prompt_tokens":
				ok = d.int(&r.TargetPromptTokens)
			case "max_tokens":
				ok = d.int(&r.MaxTokens)
			case "images":
				ok = d.int(&r.Images)
			case "prompt_tokens":
				ok = d.int(&r.PromptTokens)
			case "output_tokens":
				ok = d.int(&r.OutputTokens)
			case "cached_tokens":
				ok = d.int(&r.CachedTokens)
			case "token_source":
				v, ok = s.str()
				r.TokenSource = TokenSource(intern(v, string(prev.TokenSource), d.strs))
			case "finish_reason":
				ok = d.string(&r.FinishReason, prev.FinishReason)
			case "status":
				ok = d.int(&r.Status)
			case "error_class":
				v, ok = s.str()
				r.ErrorClass = ErrorClass(intern(v, string(prev.ErrorClass), d.strs))
			case "error":
				ok = d.string(&r.Error, prev.Error)
			case "retries":
				ok = d.int(&r.Retries)
			case "retry_idle_ns":
				ok = d.duration(&r.RetryIdle)
			case "conn_close":
				ok = d.bool(&r.ConnClose)
			case "reasoning_tokens":
				ok = d.int(&r.ReasoningTokens)
			case "no_done":
				ok = d.bool(&r.NoDone)
			case "no_stream":
				ok = d.bool(&r.NoStream)
			case "wire":
				ok = d.string(&r.Wire, prev.Wire)
			case "choices":
				ok = d.int(&r.Choices)
			case "endpoint":
				ok = d.string(&r.Endpoint, prev.Endpoint)
			case "inputs":
				ok = d.int(&r.Inputs)
			case "results":
				ok = d.int(&r.Results)
			default:
				return false
			}
			if !ok {
				return false
			}
			s.ws()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return false
			}
			s.ws()
		}
	}
	s.ws()
	return s.i == len(s.b)
}

// arrays reads the keys whose values are arrays or objects: the chunks in
// either version's form, and llama.cpp's timings. Each may appear once, and
// chunk_tokens only after chunk_dt_ns.
func (d *recordDecoder) arrays(key []byte) (ok bool) {
	r, s := d.r, &d.s
	switch string(key) {
	case "chunks":
		if d.seen&(seenChunks|seenDt) != 0 {
			return false
		}
		d.seen |= seenChunks
		r.Chunks, ok = s.chunksV1(chunkBuffer(d.prev.Chunks, s.count('{')-1))
	case "chunk_dt_ns":
		if d.seen&(seenChunks|seenDt) != 0 {
			return false
		}
		d.seen |= seenDt
		r.Chunks, ok = s.gaps(d.prev.Chunks)
	case "chunk_tokens":
		if d.seen&(seenDt|seenTokens) != seenDt {
			return false // before the gaps, or repeated
		}
		d.seen |= seenTokens
		if d.tokens, ok = s.tokens(r.Chunks); ok {
			break
		}
		d.tokens, ok = s.ints(func(i int, n int64) bool {
			if n != int64(int32(n)) {
				return false
			}
			if i < len(r.Chunks) {
				r.Chunks[i].Tokens = int32(n)
			}
			return true
		})
	case "chunk_choice":
		if d.seen&(seenDt|seenChoice) != seenDt {
			return false // before the gaps, or repeated
		}
		d.seen |= seenChoice
		d.choices, ok = s.ints(func(i int, n int64) bool {
			if n != int64(int32(n)) {
				return false
			}
			if i < len(r.Chunks) {
				r.Chunks[i].Choice = int32(n)
			}
			return true
		})
	case "violations":
		if d.seen&seenViolations != 0 {
			return false
		}
		d.seen |= seenViolations
		r.Violations, ok = d.violations()
	case "timings":
		if d.seen&seenTimings != 0 {
			return false // encoding/json would merge the two
		}
		d.seen |= seenTimings
		var v []byte
		if v, ok = s.object(); ok {
			r.Timings = new(Timings)
			ok = json.Unmarshal(v, r.Timings) == nil
		}
	}
	return ok
}

// violations reads the "violations" array of strings: an empty array is
// an empty list, as encoding/json makes it.
func (d *recordDecoder) violations() ([]Violation, bool) {
	s := &d.s
	if !s.eat('[') {
		return nil, false
	}
	out := []Violation{}
	s.ws()
	if s.eat(']') {
		return out, true
	}
	for {
		s.ws()
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, Violation(intern(v, "", d.strs)))
		s.ws()
		if s.eat(']') {
			return out, true
		}
		if !s.eat(',') {
			return nil, false
		}
	}
}

func (d *recordDecoder) int(dst *int) bool {
	n, ok := d.s.int()
	*dst = int(n)
	return ok
}

func (d *recordDecoder) duration(dst *time.Duration) bool {
	n, ok := d.s.int()
	*dst = time.Duration(n)
	return ok
}

func (d *recordDecoder) bool(dst *bool) (ok bool) {
	*dst, ok = d.s.bool()
	return ok
}

// string reads a string, sharing prev's bytes when it repeats them.
func (d *recordDecoder) string(dst *string, prev string) bool {
	v, ok := d.s.str()
	*dst = intern(v, prev, d.strs)
	return ok
}
