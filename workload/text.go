package workload

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prompt text is made of whole words drawn from a fixed vocabulary and joined
// by single spaces, so its token count under the built-in engine's tokenizer
// (one token per whitespace-separated word, summed over messages) is exactly
// the number of words asked for. The words are short, common, lower-case
// English words that BPE tokenizers of real models also encode as a single
// token with its leading space, so real engines count close to the target
// too (docs/decisions/0401-prompt-text.md).
var vocabulary = strings.Fields(`
the of and to in is was for on that with as by at from his her they this had
not are but or have one all were when there can an which their said if do
will each about how up out them then she many some so these would other into
has more two like him time see no could make than first been its who now people
my made over did down only way find use may water long little very after words
called just where most know get through back much before go good new write our
used me man too any day same right look think also around another came come work
three word must because does part even place well such here take why things help
put years different away again off went old number great tell men say small every
found still between name should home big give air line set own under read last
never us left end along while might next sound below saw something thought both few
those always looked show large often together asked house world going want school
important until form food keep children feet land side without boy once animals life
enough took sometimes four head above kind began almost live page got earth need far
hand high year mother light parts country father let night following picture being
study second eyes soon times story boys since white days ever paper hard near sentence
better best across during today others however sure means knew try told young
miles sun ways thing whole hear example heard several change answer room sea against
top turned learn point city play toward five using himself usually money seen car
`)

// appendWords appends n words drawn with rng to b, separated by single spaces.
func appendWords(b []byte, rng *rand.Rand, n int) []byte {
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, vocabulary[rng.IntN(len(vocabulary))]...)
	}
	return b
}

// words returns n words drawn with rng, built in place: a prompt is made for
// every request, and converting an appended []byte would copy it once more.
func words(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * 6)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}

// CountTokens counts tokens the way the built-in engine does: whitespace-
// separated words of every message's content, summed, with no template overhead.
func CountTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += countWords(m.Content)
	}
	return n
}

// countWords is len(strings.Fields(s)) without the slice: a dataset's
// prompt may hold millions of words, and it is counted before it is
// refused as too long.
func countWords(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); {
		var space bool
		if c := s[i]; c < utf8.RuneSelf {
			// The ASCII spaces unicode.IsSpace knows, without decoding.
			space = c == ' ' || (c >= '\t' && c <= '\r')
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
