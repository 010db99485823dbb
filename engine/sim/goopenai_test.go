package sim

import (
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestGoOpenAI holds github.com/sashabaranov/go-openai, the team's client
// library, to the engine: streaming with usage, non-streaming, errors.
func TestGoOpenAI(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{})
	cfg := openai.DefaultConfig("unused")
	cfg.BaseURL = ep.BaseURL
	client := openai.NewClientWithConfig(cfg)
	ctx := t.Context()

	stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:         "llmbench-sim",
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "one two three"}},
		MaxTokens:     6, //lint:ignore SA1019 servers other than OpenAI's read max_tokens, the field under test
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	var finish openai.FinishReason
	var usage *openai.Usage
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if resp.Usage != nil {
			usage = resp.Usage
		}
		for _, c := range resp.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if len(strings.Fields(text.String())) != 6 || finish != openai.FinishReasonLength {
		t.Errorf("streamed %q, finish %q", text.String(), finish)
	}
	if usage == nil || usage.PromptTokens != 3 || usage.CompletionTokens != 6 || usage.TotalTokens != 9 {
		t.Errorf("usage %+v", usage)
	}

	whole, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:               "llmbench-sim",
		Messages:            []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		MaxCompletionTokens: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(strings.Fields(whole.Choices[0].Message.Content)) != 3 || whole.Usage.CompletionTokens != 3 {
		t.Errorf("non-streaming %+v", whole)
	}

	_, err = client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "llmbench-sim"})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Message == "" {
		t.Errorf("error %v, want an APIError with status 400", err)
	}
}

// TestGoOpenAIProfiles: go-openai reads the llama.cpp dialect's streams,
// reasoning and tool-call deltas, and multi-token chunks.
func TestGoOpenAIProfiles(t *testing.T) {
	t.Parallel()
	p, _ := Preset("tiny")
	p.ReasoningTokens, p.ToolCallRate, p.StreamInterval, p.ChatTemplateTokens = 2, 1, 3, 5
	e, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: p})
	cfg := openai.DefaultConfig("unused")
	cfg.BaseURL = ep.BaseURL
	client := openai.NewClientWithConfig(cfg)
	stream, err := client.CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model:         DefaultModel,
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "one two three"}},
		MaxTokens:     8, //lint:ignore SA1019 servers other than OpenAI's read max_tokens, the field under test
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Tools:         []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "lookup"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var reasoning, args strings.Builder
	var name string
	var finish openai.FinishReason
	var usage *openai.Usage
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if resp.Usage != nil {
			usage = resp.Usage
		}
		for _, c := range resp.Choices {
			reasoning.WriteString(c.Delta.ReasoningContent)
			for _, tc := range c.Delta.ToolCalls {
				if tc.Function.Name != "" {
					name = tc.Function.Name
				}
				args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if len(strings.Fields(reasoning.String())) != 2 || name != "lookup" || finish != openai.FinishReasonToolCalls ||
		!strings.HasPrefix(args.String(), `{"input":"`) {
		t.Errorf("reasoning %q tool %q args %q finish %q", reasoning.String(), name, args.String(), finish)
	}
	if usage == nil || usage.PromptTokens != 3+5 || usage.CompletionTokens != 8 ||
		usage.CompletionTokensDetails == nil || usage.CompletionTokensDetails.ReasoningTokens != 2 {
		t.Errorf("usage %+v", usage)
	}
	if tr := e.Truth()[0]; tr.ToolCall != "lookup" || tr.TemplateTokens != 5 {
		t.Errorf("truth %+v", tr)
	}
}
