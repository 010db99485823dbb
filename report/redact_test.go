package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"https://bob:hunter2@engine.example/v1", "https://bob:REDACTED@engine.example/v1"},
		{"http://e/metrics?token=abc123&x=1", "http://e/metrics?token=REDACTED&x=REDACTED"},
		{`Get "http://u:p4ss@e:9/metrics?key=s3cr3t": dial tcp: refused`, `Get "http://u:REDACTED@e:9/metrics?key=REDACTED": dial tcp: refused`},
		{"status 401: invalid api key Bearer sk-abcdefghijklmnop", "status 401: invalid api key Bearer REDACTED"},
		{"Authorization: Bearer eyJhbGciOi.abc.def was refused", "Authorization: REDACTED was refused"},
		{"(Authorization: Bearer eyJhbGciOi.abc.def)", "(Authorization: REDACTED)"},
		{"incorrect API key provided: sk-proj-ABCDEFGH12345678", "incorrect API key provided: REDACTED"},
		{"model read from /v1/models?api_key=zzz", "model read from /v1/models?api_key=REDACTED"},
		{"api_key=zzz9 in the environment", "api_key=REDACTED in the environment"},
		{`{"error":{"message":"bad token","api_key":"sk-live-1234567"}}`, `{"error":{"message":"bad token","api_key":"REDACTED"}}`},
		{"output tokens 128, max_tokens 128: finished", "output tokens 128, max_tokens 128: finished"},
		{"basic checks passed; the token counts agree", "basic checks passed; the token counts agree"},
		{"", ""},
	} {
		got := Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
		if again := Redact(got); again != got {
			t.Errorf("Redact is not idempotent on %q: %q", got, again)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"http://e:8000/metrics", "http://e:8000/metrics"},
		{"http://a:b@e/metrics?token=t", "http://a:REDACTED@e/metrics?token=REDACTED"},
		{"https://sk-abcdefghijkl@e/v1", "https://REDACTED@e/v1"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, line string }{
		{"llama-3 日本 ✓", "llama-3 日本 ✓", "llama-3 日本 ✓"},
		{"m\x1b]0;pwned\x07", `m\x1b]0;pwned\x07`, `m\x1b]0;pwned\x07`},
		{"a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"c1\u009b31m", `c1\u009b31m`, `c1\u009b31m`},
		{"rtl\u202egnp.exe", `rtl\u202egnp.exe`, `rtl\u202egnp.exe`},
		{"two\nlines\r\tx\x7f\xff", "two\nlines\\x0d\tx\\x7f\\xff", `two\nlines\x0d\tx\x7f\xff`},
	} {
		got := Printable(tc.in)
		if got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := PrintableLine(tc.in); got != tc.line {
			t.Errorf("PrintableLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

// The reports' own words are not secrets: no finding's verdict reads as a
// key: value pair to Redact (a verdict once said "first token: nothing to
// decompose", and "nothing" came out REDACTED).
func TestFindingsSurviveRedaction(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	_, realRecs, realRows := realEngineRun()
	noFirst := slices.Clone(recs)
	for i := range noFirst {
		noFirst[i].FirstToken, noFirst[i].FirstContent, noFirst[i].Chunks = 0, 0, nil
		noFirst[i].ErrorClass, noFirst[i].Error = client.ErrTimeout, "request timeout"
	}
	for name, run := range map[string][]client.Record{"fixed": recs, "real engine": realRecs, "no first token": noFirst} {
		r := rows
		if name == "real engine" {
			r = realRows
		}
		s := Compute(meta, run, r, nil, 0)
		if len(s.Findings) == 0 {
			t.Fatalf("%s: no findings to check", name)
		}
		// Compute redacts what it writes: a verdict of no secret must come
		// out whole.
		for _, f := range s.Findings {
			if strings.Contains(f.Verdict, Redacted) {
				t.Errorf("%s: %s's verdict lost words to redaction: %s", name, f.ID, f.Verdict)
			}
		}
	}
}
