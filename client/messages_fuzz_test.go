package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
)

var messagesSeeds = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":2,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"x"}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"redacted\u005fthinking","data":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
	`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":1.5,"input_tokens":"3"}}`,
	`{"type":"message_stop"}`,
	`{"type": "ping"}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`{"id":"msg_w","type":"message","content":[{"type":"thinking","thinking":"a","signature":"s"},{"type":"text","text":"b"},null],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}`,
	`{"content":[{"text":"a"}],"content":[]}`,
	`{"content":[{"text":"a"}],"content":null}`,
	`{"content_block":{"text":"a"},"content_block":{"text":""}}`,
	`{"content_block":{"text":"a"},"content_block":null}`,
	`{"delta":{"text":"a"},"delta":{"thinking":"b"}}`,
	`{"delta":{"text":"a","TEXT":null}}`,
	`{"Delta":{"Partial_JSON":"x"},"Stop_Reason":"x"}`,
	`{"message":{"content":[{"input":{"a":1}}]},"message":{"id":"x"}}`,
	`{"content_block":{"input":{"a":1},"input":[]}}`,
	`{"usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":1}}`,
	`{"usage":null,"message":{"usage":{"output_tokens":-1}}}`,
	`{"error":null}`,
	`{"error":[1],"type":7}`,
	`{"content":"text"}`,
	`{"delta":{"text":7}}`,
	`{"message":[]}`,
	`[]`,
	`{"type":"message_start"} x`,
}

// refStr is a string member: null clears it, as the decoder's stringOrNull
// does; any other value is an error.
type refStr struct {
	raw []byte
	set bool
}

func (s *refStr) UnmarshalJSON(b []byte) error {
	s.set = true
	if string(b) == "null" {
		s.raw = nil
		return nil
	}
	if b[0] != '"' {
		return errors.New("not a string")
	}
	s.raw = append([]byte(nil), b...)
	return nil
}

type refMBlock struct {
	Type     refStr          `json:"type"`
	Text     refStr          `json:"text"`
	Thinking refStr          `json:"thinking"`
	Data     refStr          `json:"data"`
	Input    json.RawMessage `json:"input"`
}

func (b *refMBlock) view() (text, thinking, tool bool) {
	var typ string
	_ = json.Unmarshal(b.Type.raw, &typ)
	var input map[string]json.RawMessage
	tool = len(b.Input) > 0 && b.Input[0] == '{' && json.Unmarshal(b.Input, &input) == nil && len(input) > 0
	return nonEmptyString(b.Text.raw), nonEmptyString(b.Thinking.raw) || nonEmptyString(b.Data.raw) && typ == "redacted_thinking", tool
}

// refMUsage is a usage object: null leaves it, an object merges into it.
type refMUsage struct {
	present bool
	f       struct {
		Input         refCount `json:"input_tokens"`
		CacheCreation refCount `json:"cache_creation_input_tokens"`
		CacheRead     refCount `json:"cache_read_input_tokens"`
		Output        refCount `json:"output_tokens"`
	}
}

func (u *refMUsage) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if b[0] != '{' {
		return errors.New("not an object")
	}
	u.present = true
	return json.Unmarshal(b, &u.f)
}

type refMsg struct {
	Type       refStr       `json:"type"`
	ID         refStr       `json:"id"`
	StopReason refStr       `json:"stop_reason"`
	Content    []*refMBlock `json:"content"`
	Message    struct {
		ID         refStr       `json:"id"`
		StopReason refStr       `json:"stop_reason"`
		Content    []*refMBlock `json:"content"`
		Usage      refMUsage    `json:"usage"`
	} `json:"message"`
	ContentBlock refMBlock `json:"content_block"`
	Delta        struct {
		Text        refStr `json:"text"`
		Thinking    refStr `json:"thinking"`
		PartialJSON refStr `json:"partial_json"`
		StopReason  refStr `json:"stop_reason"`
	} `json:"delta"`
	Usage refMUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// msgSnapshot is what a decode said, comparably; a field that depends on
// which of several places came last (id, stop reason, usage) is left out
// when the data sets it in more than one.
type msgSnapshot struct {
	ok                       bool
	typ                      string
	content, reasoning, tool bool
	finish, id, err          string
	hasUse, usageBad         bool
	usage                    wireUsage
	choices                  int
}

func refMessagesDecode(data []byte) (s msgSnapshot, idOK, stopOK, usageOK bool) {
	var m refMsg
	if obj := bytes.TrimLeft(data, " \t\r\n"); len(obj) == 0 || obj[0] != '{' || json.Unmarshal(data, &m) != nil {
		return msgSnapshot{}, true, true, true
	}
	s = msgSnapshot{ok: true, typ: string(m.Type.raw)}
	blocks := []*refMBlock{&m.ContentBlock}
	blocks = append(append(blocks, m.Content...), m.Message.Content...)
	for _, b := range blocks {
		if b == nil {
			continue
		}
		text, thinking, tool := b.view()
		s.content, s.reasoning, s.tool = s.content || text, s.reasoning || thinking, s.tool || tool
	}
	s.content = s.content || nonEmptyString(m.Delta.Text.raw)
	s.reasoning = s.reasoning || nonEmptyString(m.Delta.Thinking.raw)
	s.tool = s.tool || nonEmptyString(m.Delta.PartialJSON.raw)
	count := func(set ...bool) int {
		n := 0
		for _, b := range set {
			if b {
				n++
			}
		}
		return n
	}
	if stopOK = count(m.StopReason.set, m.Message.StopReason.set, m.Delta.StopReason.set) <= 1; stopOK {
		for _, r := range []refStr{m.StopReason, m.Message.StopReason, m.Delta.StopReason} {
			if nonEmptyString(r.raw) {
				s.finish = string(finishOf(r.raw))
			}
		}
	}
	if idOK = count(m.ID.set, m.Message.ID.set) <= 1; idOK {
		for _, r := range []refStr{m.ID, m.Message.ID} {
			if nonEmptyString(r.raw) {
				s.id = string(r.raw)
			}
		}
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		s.err = string(m.Error)
	}
	if usageOK = count(m.Usage.present, m.Message.Usage.present) <= 1; usageOK {
		for _, u := range []refMUsage{m.Usage, m.Message.Usage} {
			if !u.present {
				continue
			}
			s.hasUse = true
			mu := messagesUsage{input: u.f.Input.n, cacheCreation: u.f.CacheCreation.n, cacheRead: u.f.CacheRead.n, output: u.f.Output.n}
			s.usage = mu.wire()
			s.usageBad = u.f.Input.bad || u.f.CacheCreation.bad || u.f.CacheRead.bad || u.f.Output.bad
		}
	}
	if s.content || s.reasoning || s.tool || s.finish != "" {
		s.choices = 1
	}
	return s, idOK, stopOK, usageOK
}

func msgSnap(m messagesView, err error) msgSnapshot {
	if err != nil {
		return msgSnapshot{}
	}
	v := m.v
	s := msgSnapshot{ok: true, typ: string(m.typ), content: v.content, reasoning: v.reasoning, tool: v.tool, finish: string(v.finish),
		id: string(v.id), err: string(v.err), hasUse: v.hasUsage, usageBad: v.usageBad, choices: len(v.choices)}
	if v.hasUsage {
		s.usage = *v.usage
	}
	return s
}

// FuzzMessagesDecode holds the Messages API decoder to encoding/json: the
// same data is valid or not for both, and says the same output, stop
// reason, id, usage and error.
func FuzzMessagesDecode(f *testing.F) {
	for _, s := range messagesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d chunkDecoder
		got := msgSnap(d.decodeMessages(data))
		want, idOK, stopOK, usageOK := refMessagesDecode(data)
		if !idOK {
			got.id, want.id = "", ""
		}
		if !stopOK {
			got.finish, want.finish = "", ""
			got.choices, want.choices = 0, 0
		}
		if !usageOK {
			got.hasUse, want.hasUse, got.usage, want.usage, got.usageBad, want.usageBad = false, false, wireUsage{}, wireUsage{}, false, false
		}
		if got != want {
			t.Fatalf("decodeMessages(%q)\n got %+v\nwant %+v", data, got, want)
		}
	})
}

func TestMessagesDecodeSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range messagesSeeds {
		var d chunkDecoder
		got := msgSnap(d.decodeMessages([]byte(s)))
		want, _, _, _ := refMessagesDecode([]byte(s))
		if got != want {
			t.Errorf("decodeMessages(%q)\n got %+v\nwant %+v", s, got, want)
		}
	}
}

// FuzzMessagesStream feeds any body to a Messages client: the record keeps
// the client's invariants whatever the server sent.
func FuzzMessagesStream(f *testing.F) {
	f.Add([]byte(msgStream("msg_1", 2, 3, "end_turn")))
	f.Add([]byte(strings.TrimSuffix(msgStream("msg_1", 0, 2, "max_tokens"), msgStop)))
	f.Add([]byte(msgStart("m", 1, 0) + msgDelta(0, `{"type":"text_delta","text":"a"}`) + msgEvent("error", `{"type":"error","error":{"message":"x"}}`)))
	f.Add([]byte(msgStart("m", 1, 0) + `data: {"type":"content_block_delta","delta":{"text":"a"}}` + "\n\n" + `data: {"type":"message_stop"}` + "\n\n"))
	f.Add([]byte(msgStart("m", 1, 0) + msgEnd("end_turn", 1) + msgDelta(0, `{"type":"text_delta","text":"late"}`) + msgStop))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := New(Config{BaseURL: "http://engine.test/v1", Model: "m", Endpoint: endpoints.Messages, Start: time.Now(),
			HTTPClient: &http.Client{Transport: bodyTransport(body)}})
		if err != nil {
			t.Fatal(err)
		}
		rec := c.Do(t.Context(), request("r"))
		if !knownClasses[rec.ErrorClass] || rec.ID != "r" || rec.End < rec.Sent {
			t.Fatalf("record: %+v", rec)
		}
		if rec.OutputTokens < 0 || rec.PromptTokens < 0 || rec.CachedTokens < 0 {
			t.Fatalf("negative counts: %+v", rec)
		}
		if capN, _ := UsageCaps(rec.MaxTokens, 1, 0); rec.OutputTokens > max(capN, len(rec.Chunks)) {
			t.Fatalf("%d output tokens for max_tokens %d", rec.OutputTokens, rec.MaxTokens)
		}
		for i := 1; i < len(rec.Chunks); i++ {
			if rec.Chunks[i].At < rec.Chunks[i-1].At || rec.Chunks[i].Tokens < 1 || rec.Chunks[i].Choice != 0 {
				t.Fatalf("chunk %d: %+v", i, rec.Chunks)
			}
		}
		if rec.OK() && (rec.FinishReason == "" || !bytes.Contains(body, []byte("message_stop")) && !rec.NoDone) {
			t.Fatalf("success without a stop reason, or without message_stop and not saying so: %+v", rec)
		}
		if rec.FirstContent != 0 && (rec.FirstContent < rec.FirstToken || rec.FirstToken == 0) {
			t.Fatalf("first content %v before first token %v", rec.FirstContent, rec.FirstToken)
		}
		if strings.ContainsAny(rec.Error, "\x1b\x07\u009b") {
			t.Fatalf("a terminal escape in the error %q", rec.Error)
		}
	})
}
