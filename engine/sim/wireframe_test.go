package sim

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

func TestWireFaultsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wire   WireFaults
		errHas string
	}{
		{WireFaults{LineEnding: "crlf", BOM: true, MultilineData: true, ExtraFields: true, ContentEncoding: "br", LingerAfterDone: time.Second, SplitWrites: 7}, ""},
		{WireFaults{LineEnding: "lf", ContentEncoding: "deflate-raw"}, ""},
		{WireFaults{LineEnding: "\\r\\n"}, "faults.wire.line_ending"},
		{WireFaults{ContentEncoding: "zstd"}, "faults.wire.content_encoding \"zstd\""},
		{WireFaults{LingerAfterDone: -time.Second}, "faults.wire.linger_after_done"},
		{WireFaults{LingerAfterDone: time.Hour}, "faults.wire.linger_after_done"},
		{WireFaults{SplitWrites: -1}, "faults.wire.split_writes"},
		{WireFaults{SplitWrites: 2 << 20}, "faults.wire.split_writes"},
	}
	for _, tt := range tests {
		err := Faults{Wire: tt.wire}.Validate()
		if tt.errHas == "" && err != nil || tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("%+v: %v, want an error holding %q", tt.wire, err, tt.errHas)
		}
	}
	// From YAML, as a scenario's engine.faults sets it.
	f, err := WithFaultOverrides(Faults{}, []string{`wire={"line_ending":"mixed","content_encoding":"gzip","linger_after_done":"250ms","split_writes":3}`})
	if err != nil || f.Wire != (WireFaults{LineEnding: LineMixed, ContentEncoding: CodingGzip, LingerAfterDone: 250 * time.Millisecond, SplitWrites: 3}) {
		t.Errorf("override: %+v, %v", f.Wire, err)
	}
}

// rawClient asks for nothing and decodes nothing: the test sees the bytes
// the engine sent.
func rawClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true}}
}

// wireRequest streams a request for 5 tokens with a fixed rid (so the
// chunks' words are the same on every engine) and returns the response
// and its whole body as it came.
func wireRequest(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp := rawPost(t, rawClient(), url+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b c d"}}, "max_tokens": 5, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true}, "rid": "wire-1",
	})
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// decoded undoes the response's content coding with the standard decoders.
func decoded(t *testing.T, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch coding {
	case "":
		return body
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		if r, err = zlib.NewReader(bytes.NewReader(body)); err != nil {
			r, err = flate.NewReader(bytes.NewReader(body)), nil
		}
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		t.Fatalf("coding %q", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return out
}

// specData is the data of every message event of a stream, read by the
// WHATWG algorithm written plainly (a second reading, apart from the
// client's): BOM, CRLF/LF/CR, data lines joined by "\n", one space after
// the colon dropped, dispatch at a blank line.
func specData(stream []byte) []string {
	s := strings.TrimPrefix(string(stream), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var out, data []string
	typ := ""
	for _, line := range strings.Split(s, "\n") {
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if data != nil && (typ == "" || typ == "message") {
				out = append(out, strings.Join(data, "\n"))
			}
			data, typ = nil, ""
		case strings.HasPrefix(line, ":"):
		case field == "data":
			data = append(data, value)
		case field == "event":
			typ = value
		}
	}
	return out
}

// normalized drops what differs between two engines answering the same
// request: the creation time.
func normalized(t *testing.T, data []string) []string {
	t.Helper()
	var out []string
	for _, d := range data {
		if d == "[DONE]" {
			out = append(out, d)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("data %q: %v", d, err)
		}
		delete(m, "created")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

func TestWireFaultsKeepTheStream(t *testing.T) {
	t.Parallel()
	_, plainEP := startEngine(t, Config{Dialect: DialectSGLang})
	_, plainBody := wireRequest(t, plainEP.BaseURL)
	want := normalized(t, specData(plainBody))
	if len(want) != 1+5+1+1+1 { // role, 5 tokens, finish, usage, [DONE]
		t.Fatalf("the plain stream has %d events: %q", len(want), want)
	}
	count := func(b []byte, s string) int { return bytes.Count(b, []byte(s)) }
	tests := []struct {
		wire   WireFaults
		faults []string
		raw    func(raw []byte) bool // the framing is there
	}{
		{WireFaults{LineEnding: LineCRLF}, []string{"wire_crlf"}, func(b []byte) bool { return count(b, "\r\n") == count(b, "\n") && count(b, "\r") == count(b, "\n") }},
		{WireFaults{LineEnding: LineCR}, []string{"wire_cr"}, func(b []byte) bool { return count(b, "\n") == 0 && count(b, "\r") >= 2*len(want) }},
		{WireFaults{LineEnding: LineMixed}, []string{"wire_mixed"}, func(b []byte) bool {
			lone := count(b, "\r") - count(b, "\r\n")
			return lone > 0 && count(b, "\r\n") > 0 && count(b, "\n")-count(b, "\r\n") > 0
		}},
		{WireFaults{BOM: true}, []string{"wire_bom"}, func(b []byte) bool {
			return bytes.HasPrefix(b, []byte("\xef\xbb\xbfdata: ")) && count(b, "\xef\xbb\xbf") == 1
		}},
		{WireFaults{MultilineData: true}, []string{"wire_multiline_data"}, func(b []byte) bool { return count(b, "data:") > 3*len(want) }},
		{WireFaults{ExtraFields: true}, []string{"wire_extra_fields"}, func(b []byte) bool {
			return count(b, "event: message\n") == len(want) && count(b, "retry: 3000\n") == len(want) && count(b, ": wire fault\n") == len(want)
		}},
		{WireFaults{ContentEncoding: CodingGzip}, []string{"wire_gzip"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x1f\x8b")) }},
		{WireFaults{ContentEncoding: CodingDeflate}, []string{"wire_deflate"}, func(b []byte) bool { return b[0] == 0x78 }},
		{WireFaults{ContentEncoding: CodingDeflateRaw}, []string{"wire_deflate-raw"}, func(b []byte) bool { return b[0] != 0x78 && !bytes.Contains(b, []byte("data:")) }},
		{WireFaults{ContentEncoding: CodingBrotli}, []string{"wire_br"}, func(b []byte) bool { return !bytes.Contains(b, []byte("data:")) }},
		{WireFaults{SplitWrites: 5}, []string{"wire_split_writes"}, func(b []byte) bool { return true }},
		{WireFaults{LineEnding: LineMixed, BOM: true, MultilineData: true, ExtraFields: true, ContentEncoding: CodingBrotli, SplitWrites: 3},
			[]string{"wire_mixed", "wire_bom", "wire_multiline_data", "wire_extra_fields", "wire_br", "wire_split_writes"}, func(b []byte) bool { return true }},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.wire), func(t *testing.T) {
			t.Parallel()
			e, ep := startEngine(t, Config{Dialect: DialectSGLang, Faults: Faults{Wire: tt.wire}})
			resp, raw := wireRequest(t, ep.BaseURL)
			coding := tt.wire.ContentEncoding
			if coding == CodingDeflateRaw {
				coding = CodingDeflate
			}
			if got := resp.Header.Get("Content-Encoding"); got != coding {
				t.Errorf("Content-Encoding %q, want %q", got, coding)
			}
			if !tt.raw(raw) {
				t.Errorf("the framing is not on the wire: %q", raw)
			}
			got := normalized(t, specData(decoded(t, coding, raw)))
			if !slices.Equal(got, want) {
				t.Errorf("events\n%q\nwant the plain engine's\n%q", got, want)
			}
			tr := e.Truth()[0]
			if tr.Outcome != OutcomeOK || !tr.Done || tr.OutputTokens != 5 || len(tr.TokenFlushes) != 5 || !slices.Equal(tr.Faults, tt.faults) {
				t.Errorf("truth: outcome %s done %v, %d tokens, %d flushes, faults %v; want ok, true, 5, 5, %v",
					tr.Outcome, tr.Done, tr.OutputTokens, len(tr.TokenFlushes), tr.Faults, tt.faults)
			}
		})
	}
}

// rawChunks sends a streamed request over a bare connection and returns the
// sizes of the chunked encoding's chunks: each flush of the engine is one.
func rawChunks(t *testing.T, baseURL string) []int {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(baseURL, "/v1"), "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"messages":[{"role":"user","content":"a b"}],"max_tokens":3,"ignore_eos":true,"stream":true}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", host, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.TransferEncoding) == 0 {
		t.Fatalf("not chunked: %v", resp.Header)
	}
	var sizes []int
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("chunk size: %v", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size %q: %v", line, err)
		}
		if n == 0 {
			return sizes
		}
		sizes = append(sizes, int(n))
		if _, err := br.Discard(int(n) + 2); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWireSplitWritesFlushEachFragment(t *testing.T) {
	t.Parallel()
	_, plain := startEngine(t, Config{})
	_, split := startEngine(t, Config{Faults: Faults{Wire: WireFaults{SplitWrites: 4}}})
	whole, pieces := rawChunks(t, plain.BaseURL), rawChunks(t, split.BaseURL)
	total := func(s []int) (n int) {
		for _, v := range s {
			n += v
		}
		return n
	}
	if total(whole) != total(pieces) || slices.Max(pieces) > 4 || len(pieces) < total(whole)/4 {
		t.Errorf("plain chunks %v (%d bytes); split %v (%d bytes): want the same bytes in fragments of at most 4", whole, total(whole), pieces, total(pieces))
	}
}

// The connection stays open LingerAfterDone after the last event, which the
// truth's Finish stamps: the body ends no sooner than that on the engine's
// own clock (an exact bound: the linger's timer starts after the stamp).
func TestWireLingerAfterDone(t *testing.T) {
	t.Parallel()
	const linger = 300 * time.Millisecond
	e, ep := startEngine(t, Config{Faults: Faults{Wire: WireFaults{LingerAfterDone: linger, ContentEncoding: CodingGzip}}})
	resp := rawPost(t, rawClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b"}}, "max_tokens": 3, "stream": true,
	})
	data, err := io.ReadAll(resp.Body)
	ended := e.now()
	if err != nil {
		t.Fatal(err)
	}
	if got := specData(decoded(t, "gzip", data)); len(got) == 0 || got[len(got)-1] != "[DONE]" {
		t.Errorf("events %q: want a whole stream", got)
	}
	tr := e.Truth()[0]
	if tr.Outcome != OutcomeOK || !slices.Contains(tr.Faults, "wire_linger") {
		t.Errorf("truth outcome %s faults %v", tr.Outcome, tr.Faults)
	}
	if ended-tr.Finish < linger {
		t.Errorf("the body ended %v after the truth's finish, before the linger of %v", ended-tr.Finish, linger)
	}
}

// A stream cut by a fault stays cut under compression: no compressed end
// is written for it, so a client cannot mistake it for a clean end.
func TestWireCutStreamHasNoCompressedEnd(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Faults: Faults{ResetRate: 1, AfterTokens: 2, Wire: WireFaults{ContentEncoding: CodingGzip}}})
	resp := rawPost(t, rawClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b"}}, "max_tokens": 8, "stream": true,
	})
	z, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(z)
	if err == nil {
		t.Errorf("the cut stream read to a clean end: %q", got)
	}
	if !bytes.Contains(got, []byte("data: ")) {
		t.Errorf("nothing decoded before the cut: %q", got)
	}
}

// Error answers are compressed too, as a proxy compresses everything.
func TestWireErrorAnswerCompressed(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Faults: Faults{ErrorRate: 1, ErrorStatuses: []int{503}, Wire: WireFaults{ContentEncoding: CodingBrotli, LineEnding: LineCR}}})
	resp, raw := wireRequest(t, ep.BaseURL)
	if resp.StatusCode != 503 || resp.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("status %d, coding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if body := decoded(t, "br", raw); !bytes.Contains(body, []byte("injected fault: 503")) || bytes.Contains(body, []byte("\r")) {
		t.Errorf("error body %q: want the JSON error, its lines not reframed", body)
	}
	if tr := e.Truth()[0]; !slices.Equal(tr.Faults, []string{FaultError, "wire_br"}) {
		t.Errorf("faults %v: the framing of event streams does not apply to a JSON answer", tr.Faults)
	}
}
