package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// newLineReader reads the lines of a line-oriented data file (a JSONL
// dataset, a Mooncake trace, a length histogram) as a stream, each line
// within the bound on one (inputfile.DataLineBytes): a longer one is refused
// with the file, the line and the bound.
func newLineReader(name string, r io.Reader) *inputfile.Lines {
	return inputfile.NewLines(r, name, inputfile.Data)
}

// jsonError places a JSON decoding error at its line when it carries an
// offset; base is where the value being decoded starts in the stream (a
// type error's offset counts from there). A bound hit while decoding is
// passed on as it is: it names its file and line.
func jsonError(name string, rs *inputfile.Records, base int64, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var be *inputfile.BoundError
	switch {
	case errors.As(err, &be):
		return err
	case errors.As(err, &syn):
		return fmt.Errorf("%s:%d: invalid JSON: %v", name, rs.LineAt(syn.Offset), syn)
	case errors.As(err, &typ):
		return fmt.Errorf("%s:%d: %s: want %s, got a JSON %s", name, rs.LineAt(base+typ.Offset), typ.Field, jsonKind(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s:%d: invalid JSON: unexpected end of file", name, rs.LineAt(math.MaxInt64))
	}
	return fmt.Errorf("%s: %w", name, err)
}

// jsonKind names a Go type the way a JSON file's author would.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// shareGPTEntry is the part of a ShareGPT record llmbench reads.
type shareGPTEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

var shareGPTModel = map[string]bool{"gpt": true, "assistant": true, "model": true, "chatgpt": true, "bard": true}

// parseShareGPT reads a ShareGPT JSON file: an array of records whose
// "conversations" alternate "human" and "gpt" turns. The prompt is the first
// human turn; the output target is the length of the model turn that answers
// it. Records without a human turn, or without its answer when the file must
// give the length (needOutput), are skipped and counted.
func parseShareGPT(name string, r io.Reader, needOutput bool) (list []record, skipped int, err error) {
	// Streamed record by record, each within the bound on one.
	rs := inputfile.NewRecords(r, name, inputfile.Data)
	dec := json.NewDecoder(rs)
	if tok, err := dec.Token(); err != nil {
		return nil, 0, jsonError(name, rs, 0, err)
	} else if tok != json.Delim('[') {
		return nil, 0, fmt.Errorf("%s:1: want a JSON array of ShareGPT records, got %v", name, tok)
	}
	for n := 0; dec.More(); n++ {
		var e shareGPTEntry
		start := dec.InputOffset()
		rs.Mark(start)
		if err := dec.Decode(&e); err != nil {
			return nil, 0, fmt.Errorf("record %d: %w", n, jsonError(name, rs, start, err))
		}
		human, words := -1, 0
		for i, c := range e.Conversations {
			if f := strings.ToLower(c.From); f == "human" || f == "user" {
				if words = countWords(c.Value); words > 0 {
					human = i
					break
				}
			}
		}
		if human < 0 {
			skipped++
			continue
		}
		prompt := e.Conversations[human].Value
		if err := checkTokens("prompt", words); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: record %d: %w", name, rs.LineAt(start), n, err)
		}
		out := 0
		if next := human + 1; next < len(e.Conversations) && shareGPTModel[strings.ToLower(e.Conversations[next].From)] {
			out = countWords(e.Conversations[next].Value)
		}
		if out == 0 && needOutput {
			skipped++
			continue
		}
		list = append(list, record{
			msgs:      []Message{{Role: "user", Content: prompt}},
			tokens:    words,
			maxTokens: out,
		})
	}
	rs.Mark(dec.InputOffset())
	if _, err := dec.Token(); err != nil {
		return nil, 0, jsonError(name, rs, dec.InputOffset(), err)
	}
	if len(list) == 0 {
		return nil, skipped, fmt.Errorf("%s: no usable record (%d skipped: no human turn or no answer)", name, skipped)
	}
	return list, skipped, nil
}

// jsonlPrompt is one line of a JSONL prompt file.
type jsonlPrompt struct {
	Messages  []Message `json:"messages"`
	Prompt    *string   `json:"prompt"`
	MaxTokens *int      `json:"max_tokens"`
	// Images are image files (PNG or JPEG) sent with the last message,
	// relative to the dataset file (images.go).
	Images []string `json:"images"`
}

// parseJSONL reads one prompt per line: {"messages": [{"role", "content"}...]}
// or {"prompt": "..."}, with an optional "max_tokens". Blank lines are skipped.
func parseJSONL(name string, r io.Reader) ([]record, error) {
	var list []record
	lr := newLineReader(name, r)
	for lr.Next() {
		line := lr.Line()
		text := bytes.TrimSpace(lr.Bytes())
		if len(text) == 0 {
			continue
		}
		var p jsonlPrompt
		if err := json.Unmarshal(text, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, jsonLineError(err))
		}
		var rec record
		switch {
		case p.Prompt != nil && p.Messages != nil:
			return nil, fmt.Errorf("%s:%d: set \"messages\" or \"prompt\", not both", name, line)
		case p.Prompt != nil:
			rec.msgs = []Message{{Role: "user", Content: *p.Prompt}}
		case len(p.Messages) > 0:
			for i, m := range p.Messages {
				switch m.Role {
				case "system", "user", "assistant", "developer", "tool":
				default:
					return nil, fmt.Errorf("%s:%d: messages[%d]: unknown role %q", name, line, i, m.Role)
				}
			}
			rec.msgs = p.Messages
		default:
			return nil, fmt.Errorf("%s:%d: want \"messages\" (a non-empty list) or \"prompt\"", name, line)
		}
		if err := rec.nameImages(p.Images, line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rec.tokens = CountTokens(rec.msgs)
		if rec.tokens == 0 {
			return nil, fmt.Errorf("%s:%d: the prompt has no words", name, line)
		}
		if err := checkTokens("prompt", rec.tokens); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if p.MaxTokens != nil {
			if *p.MaxTokens < 1 {
				return nil, fmt.Errorf("%s:%d: max_tokens: want at least 1, got %d", name, line, *p.MaxTokens)
			}
			if err := checkTokens("max_tokens", *p.MaxTokens); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			rec.maxTokens = *p.MaxTokens
		}
		list = append(list, rec)
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no prompts", name)
	}
	return list, nil
}

// jsonLineError words a JSON error within one line.
func jsonLineError(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s: want %s, got a JSON %s", typ.Field, jsonKind(typ.Type), typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
