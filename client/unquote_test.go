package client

import (
	"encoding/json"
	"testing"
)

// unquoteReference is unquote as it was before its fast path: encoding/json
// for every string, the raw bytes when it does not decode.
func unquoteReference(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw)
	}
	return s
}

// TestUnquote: the fast path for plain strings returns what encoding/json
// returns, and everything else still goes through it.
func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{`"stop"`, "stop"},
		{`""`, ""},
		{`"chatcmpl-0123"`, "chatcmpl-0123"},
		{`"héllo ✓"`, "héllo ✓"},
		{`"a\"b"`, `a"b`},
		{`"a\\b"`, `a\b`},
		{`"\u00e9"`, "é"},
		{`"line\nbreak"`, "line\nbreak"},
		{"\"raw\nnewline\"", "\"raw\nnewline\""}, // a control character: not JSON, kept raw
		{"\"\xff\"", "\uFFFD"},                   // invalid UTF-8: encoding/json replaces it
		{`"a"b"`, `"a"b"`},                       // not one string: kept raw
		{`"`, `"`},
		{`null`, ""},
		{`12`, "12"},
		{` "x"`, "x"},
	} {
		if got := unquote([]byte(tc.raw)); got != tc.want {
			t.Errorf("unquote(%q) = %q, want %q", tc.raw, got, tc.want)
		}
		if ref := unquoteReference([]byte(tc.raw)); ref != tc.want {
			t.Errorf("reference(%q) = %q, want %q: the table is wrong", tc.raw, ref, tc.want)
		}
	}
}

// FuzzUnquote: unquote agrees with encoding/json on any input.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"stop"`, `"a\"b"`, "\"\xff\"", `"\u2028"`, `""`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := unquote(raw), unquoteReference(raw); got != want {
			t.Errorf("unquote(%q) = %q, encoding/json %q", raw, got, want)
		}
	})
}
