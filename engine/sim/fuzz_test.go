package sim

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

func FuzzParseChatRequest(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi there"}],"stream":true,"max_tokens":3}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}],"rid":"x"}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":null}],"n":2}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseChatRequest(body, false)
		if err != nil {
			return
		}
		if len(req.Messages) == 0 {
			t.Fatal("accepted a request without messages")
		}
		for _, m := range req.Messages {
			text, err := messageText(m.Content)
			if err == nil {
				promptTokens(m.Role, text, batch.NewHasher(16))
			}
		}
		_, _ = ridString(req.RID)
	})
}

// FuzzPromptTokens: the tokenizer counts exactly what strings.Fields splits
// (decision note 0101), and feeds one token id per word.
func FuzzPromptTokens(f *testing.F) {
	f.Add("hello  world\tand\nmore")
	f.Add("  ")
	f.Add("naïve café\u00a0word\u2003x")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		h := batch.NewHasher(1)
		n := promptTokens("user", s, h)
		if want := len(strings.Fields(s)); n != want {
			t.Fatalf("promptTokens(%q) = %d, strings.Fields gives %d", s, n, want)
		}
		if len(h.Hashes()) != n {
			t.Fatalf("%d token ids for %d words", len(h.Hashes()), n)
		}
	})
}
