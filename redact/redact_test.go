package redact

import (
	"bytes"
	"slices"
	"testing"
)

func TestText(t *testing.T) {
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
		got := Text(tc.in)
		if got != tc.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
		if again := Text(got); again != got {
			t.Errorf("Redact is not idempotent on %q: %q", got, again)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"http://e:8000/metrics", "http://e:8000/metrics"},
		{"http://a:b@e/metrics?token=t", "http://a:REDACTED@e/metrics?token=REDACTED"},
		{"https://sk-abcdefghijkl@e/v1", "https://REDACTED@e/v1"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
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

// The one policy is the union of the copies it replaced (report's text
// patterns, the client's bearer and sk- rules and its known key, launch's
// secret flags): each row is a secret one of them let through or a word
// none may take.
func TestPolicyUnion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		// a short token alone in a URL's userinfo (report kept it under 20 characters)
		{"https://abc123@engine.example/v1", "https://REDACTED@engine.example/v1"},
		{`Post "https://t0k@e:8000/v1/chat/completions": EOF`, `Post "https://REDACTED@e:8000/v1/chat/completions": EOF`},
		{"http://user:pw@e/", "http://user:REDACTED@e/"},
		// header values
		{"authorization: Basic dXNlcjpwYXNz", "authorization: REDACTED"},
		{`{"Authorization":"Bearer abc.def"}`, `{"Authorization":"REDACTED"}`},
		{"x-api-key: 0123abcd", "x-api-key: REDACTED"},
		// query parameters, in a URL and a bare path
		{"GET /metrics?access_token=abc&x=1", "GET /metrics?access_token=REDACTED&x=REDACTED"},
		{"https://e/v1?key=k", "https://e/v1?key=REDACTED"},
		// bearer with the characters a token may hold (the client's rule: ':' too)
		{"Bearer a:b.c", "Bearer REDACTED"},
		{"token bearer\teyJhbGciOi.J9.x-y_z= refused", "token bearer\tREDACTED refused"},
		// sk-shaped keys (report's: pk-, rk- and six characters too)
		{"bad key sk-proj-AbC_123-xyz9876 given", "bad key REDACTED given"},
		{"rk-abcdef1 and pk-abcdef2", "REDACTED and REDACTED"},
		{"sk-short and task-force stay", "sk-short and task-force stay"},
		// secret pairs
		{"password: hunter2", "password: REDACTED"},
		{"client_secret=s passwd=p", "client_secret=REDACTED passwd=REDACTED"},
		// words that are not secrets
		{"the key point: nothing failed", "the key point: nothing failed"},
		{"max_tokens 128, tokens 3", "max_tokens 128, tokens 3"},
	} {
		got := Text(tc.in)
		if got != tc.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
		if again := Text(got); again != got {
			t.Errorf("Text is not idempotent on %q: %q", got, again)
		}
	}
}

func TestKnown(t *testing.T) {
	t.Parallel()
	const key = "my-engine-key-42"
	for _, tc := range []struct{ in, want string }{
		{"status 401 Unauthorized: invalid header Authorization: Bearer sk-abcdefghijklmnop",
			"status 401 Unauthorized: invalid header Authorization: REDACTED"},
		{"key " + key + " is not known", "key REDACTED is not known"},
		{"BEARER " + key, "BEARER REDACTED"},
		{"nothing secret here", "nothing secret here"},
	} {
		if got := Known(tc.in, key); got != tc.want {
			t.Errorf("Known(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Known("a placeholder x", "x", ""); got != "a placeholder x" {
		t.Errorf("a 1-byte key blanked the message: %q", got)
	}
}

func TestArgv(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want []string }{
		{[]string{"vllm", "serve", "m", "--api-key", "sk-1", "--port", "1"}, []string{"vllm", "serve", "m", "--api-key", "REDACTED", "--port", "1"}},
		{[]string{"x", "--hf-token=hf_abc", "--max-num-batched-tokens", "8192", "--tokenizer", "t"}, []string{"x", "--hf-token=REDACTED", "--max-num-batched-tokens", "8192", "--tokenizer", "t"}},
		{[]string{"x", "--api_key", "--verbose"}, []string{"x", "--api_key", "--verbose"}},
		{[]string{"x", "--db-passwd", "p"}, []string{"x", "--db-passwd", "REDACTED"}},
		// what the flag rule cannot see, the text rule does
		{[]string{"x", "--base-url", "https://u:pw@e/v1", "sk-abcdefghij"}, []string{"x", "--base-url", "https://u:REDACTED@e/v1", "REDACTED"}},
	} {
		if got := Argv(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Argv(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSafeWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	in := "engine at https://u:pw@e/v1 said \x1b[2Jhi\n"
	n, err := SafeWriter(&b).Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := `engine at https://u:REDACTED@e/v1 said \x1b[2Jhi` + "\n"; b.String() != want {
		t.Errorf("SafeWriter wrote %q, want %q", b.String(), want)
	}
}

// All redacts each string into a new slice and keeps nil as nil.
func TestAll(t *testing.T) {
	t.Parallel()
	if All(nil) != nil {
		t.Error("All(nil) is not nil")
	}
	in := []string{"plain note", "Authorization: Bearer sk-abcdefghijklmnopqrstuvwx"}
	got := All(in)
	if len(got) != 2 || got[0] != "plain note" || got[1] != Text(in[1]) || got[1] == in[1] {
		t.Errorf("All(%q) = %q", in, got)
	}
	if in[1] != "Authorization: Bearer sk-abcdefghijklmnopqrstuvwx" {
		t.Error("All changed its input")
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	argv := []string{"vllm", "serve", "m", "--api-key", "k1-secret", "--hf-token=hf_abc", "--max-num-batched-tokens", "8192", "--tokenizer", "t", "--client-secret", "--port", "8000"}
	env := []string{"HF_TOKEN=hf_env", "OPENAI_API_KEY=sk-env", "HF_HUB_DISABLE_TOKEN=1", "USE_AUTH_TOKEN=false", "PATH=/bin", "TOKENIZERS_PARALLELISM=false", "EMPTY_KEY="}
	got := Secrets(argv, env)
	want := []string{"k1-secret", "hf_abc", "hf_env", "sk-env"}
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q (a secret flag followed by another flag has no value)", got, want)
	}
	if s := Known("{'api_key': ['k1-secret']}", got...); s != "{'api_key': ['REDACTED']}" {
		t.Errorf("Known = %q", s)
	}
}
