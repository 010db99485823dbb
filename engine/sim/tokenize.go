package sim

import (
	"unicode"
	"unicode/utf8"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// The built-in tokenizer (decision note 0101): one token per
// whitespace-separated word of a message's content (unicode.IsSpace, as
// strings.Fields splits), prompt_tokens = the sum over messages, no chat
// template overhead. Each generated token is one word from genVocab with a
// leading space, so a client can count tokens from the text too.

// promptTokens counts the words of one message and feeds their token ids to
// h (nil = count only). A token id is the word's hash salted with the
// message's role, so equal words under different roles are different tokens.
func promptTokens(role, content string, h *batch.Hasher) int {
	salt := batch.HashString(role)
	n := 0
	start := -1
	for i := 0; i < len(content); {
		r, size := rune(content[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(content[i:])
		}
		if isSpace(r) {
			if start >= 0 {
				n++
				if h != nil {
					h.Add(batch.HashString(content[start:i]) ^ salt)
				}
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		n++
		if h != nil {
			h.Add(batch.HashString(content[start:]) ^ salt)
		}
	}
	return n
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
	}
	return unicode.IsSpace(r)
}

// genVocab holds the words the simulated model generates: plain ASCII that
// needs no JSON escaping.
var genVocab = [64]string{
	" the", " of", " and", " to", " in", " a", " is", " that",
	" for", " it", " as", " was", " with", " be", " by", " on",
	" not", " he", " this", " are", " or", " his", " from", " at",
	" which", " but", " have", " an", " had", " they", " you", " were",
	" their", " one", " all", " we", " can", " her", " has", " there",
	" been", " if", " more", " when", " will", " would", " who", " so",
	" no", " out", " up", " into", " do", " any", " time", " my",
	" its", " only", " new", " some", " could", " these", " two", " may",
}

// genWord is the i-th generated word of a request whose id hashes to base.
func genWord(base uint64, i int) string {
	return genVocab[(base+uint64(i)*7)%uint64(len(genVocab))]
}
