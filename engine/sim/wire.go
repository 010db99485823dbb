package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// chatRequest is the part of an OpenAI chat-completions body the engine reads.
// Unknown fields are accepted and ignored, as real engines do; temperature
// and top_p only go into the request's trace span (otlp.go).
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
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	RID                 json.RawMessage `json:"rid"`        // SGLang
	RequestID           string          `json:"request_id"` // vLLM, FastDeploy
	Tools               []tool          `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	// Prompt is /v1/completions' prompt (a string).
	Prompt json.RawMessage `json:"prompt"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsageStats (vLLM) puts usage in every chunk when IncludeUsage is set too.
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// tool is one entry of a request's tools.
type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolName is the function a tool-call answer calls: the one tool_choice
// names, else the first offered; "" when tools are absent or tool_choice is
// "none".
func (r *chatRequest) toolName() string {
	choice := bytes.TrimSpace(r.ToolChoice)
	if bytes.Equal(choice, []byte(`"none"`)) {
		return ""
	}
	if len(choice) > 0 && choice[0] == '{' {
		var c tool
		if json.Unmarshal(choice, &c) == nil && c.Function.Name != "" {
			return c.Function.Name
		}
	}
	for _, t := range r.Tools {
		if t.Function.Name != "" {
			return t.Function.Name
		}
	}
	return ""
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"` // images.go
}

// badRequest is a client error with its OpenAI error type.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

// parseChatRequest decodes and checks a body (of /v1/completions when
// completions is set). An n other than 1 is refused by the handler unless
// faults.payload.choices is set (checkN).
func parseChatRequest(body []byte, completions bool) (*chatRequest, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badf("invalid JSON body: %v", err)
	}
	if completions {
		p := bytes.TrimSpace(req.Prompt)
		if len(p) == 0 || p[0] != '"' {
			return nil, badf("prompt must be a string")
		}
	} else if len(req.Messages) == 0 {
		return nil, badf("messages must be a non-empty list")
	}
	if req.N != nil && (*req.N < 1 || *req.N > MaxChoices) {
		return nil, badf("n must be in [1, %d], got n=%d", MaxChoices, *req.N)
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

// checkN refuses an n other than 1 unless the engine answers several
// choices (faults.payload.choices): it has no model of n sequences.
func (r *chatRequest) checkN(p *PayloadFaults) error {
	if r.N != nil && *r.N != 1 && p.Choices == 0 {
		return badf("only n=1 is supported, got n=%d (faults.payload.choices streams several choices)", *r.N)
	}
	return nil
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
		text, _, err := contentParts(raw) // images.go
		return text, err
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
