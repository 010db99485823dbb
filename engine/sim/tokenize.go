package sim

import (
	"strings"
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

// The chat template (Params.ChatTemplateTokens, ChatTemplateMessageTokens)
// is rendered ChatML-like so that its text has exactly the tokens it adds:
// each message becomes "<|im_start|>ROLE" [<|pad|> ...] CONTENT [<|im_end|>]
// (ChatTemplateMessageTokens words around the content), and the request ends
// with the generation prompt "<|im_start|>assistant" [<|pad|> ...]
// (ChatTemplateTokens words). The marker words are tokens like any other for
// the prefix cache, so requests with equal leading messages still share it.

// templated reports whether the params add a chat template.
func templated(p Params) bool { return p.ChatTemplateTokens > 0 || p.ChatTemplateMessageTokens > 0 }

// templateMessage renders one message through the template.
func templateMessage(b []byte, p Params, role, content string) []byte {
	m := p.ChatTemplateMessageTokens
	if m == 0 {
		b = append(b, content...)
		return append(b, '\n')
	}
	b = append(b, "<|im_start|>"...)
	for _, f := range strings.Fields(role) {
		b = append(b, f...)
	}
	for range m - 2 {
		b = append(b, " <|pad|>"...)
	}
	b = append(b, '\n')
	b = append(b, content...)
	if m >= 2 {
		b = append(b, "\n<|im_end|>"...)
	}
	return append(b, '\n')
}

// templateEnd renders the generation prompt.
func templateEnd(b []byte, p Params) []byte {
	if p.ChatTemplateTokens == 0 {
		return b
	}
	b = append(b, "<|im_start|>assistant"...)
	for range p.ChatTemplateTokens - 1 {
		b = append(b, " <|pad|>"...)
	}
	return append(b, '\n')
}

// templateEndRole salts the generation prompt's tokens for the prefix cache.
const templateEndRole = "assistant"

// chatTokensImages counts the prompt tokens of a chat request and feeds
// their ids to h (nil = count only): the messages' words, the template's
// when the params set one (template is the part it added), and each
// message's images after its text (img, images.go).
func chatTokensImages(p Params, msgs []chatMessage, h *batch.Hasher) (total, template int, img imageUse, err error) {
	var buf []byte
	for _, m := range msgs {
		text, urls, err := messageContent(m.Content)
		if err != nil {
			return 0, 0, img, err
		}
		if !templated(p) {
			total += promptTokens(m.Role, text, h)
		} else {
			words := promptTokens(m.Role, text, nil)
			buf = templateMessage(buf[:0], p, m.Role, text)
			n := promptTokens(m.Role, string(buf), h)
			total += n
			template += n - words
		}
		n, err := imageTokens(urls, h)
		if err != nil {
			return 0, 0, img, err
		}
		total += n
		img.images += len(urls)
		img.tokens += n
	}
	if templated(p) {
		n := promptTokens(templateEndRole, string(templateEnd(nil, p)), h)
		total += n
		template += n
	}
	return total, template, img, nil
}

// applyTemplate renders a chat request's whole prompt text.
func applyTemplate(p Params, msgs []chatMessage) (string, error) {
	var b []byte
	for _, m := range msgs {
		text, err := messageText(m.Content)
		if err != nil {
			return "", err
		}
		b = templateMessage(b, p, m.Role, text)
	}
	return string(templateEnd(b, p)), nil
}

// tokenIDs are the ids /tokenize answers for a text: one per word, a hash of
// the word in a 32,000-token vocabulary (ids 3 and up, as a Llama
// vocabulary's first ids are special).
func tokenIDs(text string) []int {
	fields := strings.Fields(text)
	ids := make([]int, len(fields))
	for i, f := range fields {
		ids[i] = 3 + int(batch.HashString(f)%31997)
	}
	return ids
}
