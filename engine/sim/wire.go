package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// chatRequest is the part of an OpenAI chat-completions body the engine reads.
// Unknown fields (temperature, top_p, ...) are accepted and ignored, as real
// engines do.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	N                   *int            `json:"n"`
	RID                 json.RawMessage `json:"rid"`        // SGLang
	RequestID           string          `json:"request_id"` // vLLM, FastDeploy
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// badRequest is a client error with its OpenAI error type.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

// parseChatRequest decodes and checks a body.
func parseChatRequest(body []byte) (*chatRequest, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badf("invalid JSON body: %v", err)
	}
	if len(req.Messages) == 0 {
		return nil, badf("messages must be a non-empty list")
	}
	if req.N != nil && *req.N != 1 {
		return nil, badf("only n=1 is supported, got n=%d", *req.N)
	}
	if req.MaxTokens != nil && *req.MaxTokens < 1 {
		return nil, badf("max_tokens must be at least 1, got %d", *req.MaxTokens)
	}
	if req.MaxCompletionTokens != nil && *req.MaxCompletionTokens < 1 {
		return nil, badf("max_completion_tokens must be at least 1, got %d", *req.MaxCompletionTokens)
	}
	if req.MinTokens < 0 {
		return nil, badf("min_tokens must be >= 0, got %d", req.MinTokens)
	}
	return &req, nil
}

// messageText returns the text of a message's content: a string, null, or a
// list of parts whose "text" parts are joined with a space.
func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badf("invalid message content: %v", err)
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", badf("invalid message content parts: %v", err)
		}
		var b bytes.Buffer
		for _, p := range parts {
			if p.Type != "text" {
				return "", badf("content part type %q is not supported (text only)", p.Type)
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Text)
		}
		return b.String(), nil
	}
	return "", badf("message content must be a string or a list of parts")
}

// ridString reads SGLang's rid: a string (a list is for batches, which the
// chat endpoint does not take).
func ridString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badf("rid must be a string")
	}
	return s, nil
}

// chunkEncoder renders the SSE chunks of one response with plain appends:
// the per-token path must stay cheap (engine speed goal), and every value
// that needs escaping (id, model) is escaped once up front.
type chunkEncoder struct {
	head []byte // data: {"id":...,"model":...,"choices":[{"index":0,
}

func newChunkEncoder(id, model string, created int64) chunkEncoder {
	var h []byte
	h = append(h, `data: {"id":`...)
	h = appendJSONString(h, id)
	h = append(h, `,"object":"chat.completion.chunk","created":`...)
	h = strconv.AppendInt(h, created, 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, model)
	h = append(h, `,"choices":[`...)
	return chunkEncoder{head: h}
}

func (c *chunkEncoder) role(dst []byte) []byte {
	dst = append(dst, c.head...)
	return append(dst, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"...)
}

// content appends a chunk carrying words [from, from+n) of the answer.
func (c *chunkEncoder) content(dst []byte, base uint64, from, n int) []byte {
	dst = append(dst, c.head...)
	dst = append(dst, `{"index":0,"delta":{"content":"`...)
	for i := from; i < from+n; i++ {
		dst = append(dst, genWord(base, i)...)
	}
	return append(dst, `"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"...)
}

func (c *chunkEncoder) finish(dst []byte, reason string) []byte {
	dst = append(dst, c.head...)
	dst = append(dst, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	dst = appendJSONString(dst, reason)
	return append(dst, `}],"usage":null}`+"\n\n"...)
}

func (c *chunkEncoder) usage(dst []byte, u usage) []byte {
	dst = append(dst, c.head...)
	dst = append(dst, `],"usage":`...)
	dst = u.appendJSON(dst)
	return append(dst, "}\n\n"...)
}

var sseDone = []byte("data: [DONE]\n\n")

type usage struct{ prompt, completion, cached int }

func (u usage) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.prompt), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.completion), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.prompt+u.completion), 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.cached), 10)
	return append(dst, `}}`...)
}

// completionBody renders a non-streaming response.
func completionBody(id, model string, created int64, base uint64, n int, reason string, u usage) []byte {
	var b []byte
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
	for i := range n {
		b = append(b, genWord(base, i)...)
	}
	b = append(b, `"},"logprobs":null,"finish_reason":`...)
	b = appendJSONString(b, reason)
	b = append(b, `}],"usage":`...)
	b = u.appendJSON(b)
	return append(b, "}\n"...)
}

// apiError is OpenAI's error shape: {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    int    `json:"code"`
}

// errorType names the OpenAI error type of an HTTP status.
func errorType(status int) string {
	switch {
	case status == 400:
		return "BadRequestError"
	case status == 404:
		return "NotFoundError"
	case status == 405:
		return "MethodNotAllowedError"
	case status == 413:
		return "RequestTooLargeError"
	case status == 429:
		return "RateLimitError"
	case status == 503:
		return "ServiceUnavailableError"
	default:
		return "InternalServerError"
	}
}

func errorJSON(status int, msg string) []byte {
	b, _ := json.Marshal(apiError{Error: apiErrorBody{Message: msg, Type: errorType(status), Code: status}})
	return append(b, '\n')
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

var errBodyTooLarge = errors.New("request body too large")
