package calibrate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/workload"
)

// The Messages API (endpoints.KindMessages) sends a prompt's system
// messages as its top-level "system", joined, ahead of the rest
// (client.SplitSystem); the engine renders that through its chat template.
// Its counters count the messages in that form, and its probe sends the
// API's request and reads the API's usage.

// asSent makes cs count the messages the way cfg's endpoint sends them.
func asSent(cfg Config, cs []*counter) []*counter {
	if cfg.ep.Kind != endpoints.KindMessages {
		return cs
	}
	for _, c := range cs {
		count := c.request
		c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
			return count(ctx, messagesAsSent(msgs))
		}
	}
	return cs
}

// messagesAsSent is msgs as a Messages request carries them, in chat
// terms: the joined system prompt as one system message first.
func messagesAsSent(msgs []workload.Message) []workload.Message {
	in := make([]client.Message, len(msgs))
	for i, m := range msgs {
		in[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	system, rest := client.SplitSystem(in)
	out := make([]workload.Message, 0, len(rest)+1)
	if system != "" { // as the client sends it: no "system" when empty
		out = append(out, workload.Message{Role: "system", Content: system})
	}
	for _, m := range rest {
		out = append(out, workload.Message{Role: m.Role, Content: m.Content})
	}
	return out
}

// newMessagesProbe sends real Messages requests (max_tokens 1, not
// streamed) and reads their usage: every input token, those read from and
// written to the prompt cache included.
func newMessagesProbe(cfg Config, p poster, base string) *counter {
	url := endpoints.URL(base, cfg.ep.Path)
	c := &counter{family: familyUsage, method: MethodProbe,
		source: "POST " + url + " (max_tokens 1, usage.input_tokens + cache_read_input_tokens + cache_creation_input_tokens)"}
	idField, _ := client.IDField(cfg.Dialect)
	sent := 0
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		sent++
		id := client.ProbeIDPrefix + strconv.Itoa(sent)
		in := make([]client.Message, len(msgs))
		for i, m := range msgs {
			in[i] = client.Message{Role: m.Role, Content: m.Content}
		}
		system, rest := client.SplitSystem(in)
		body := withModel(cfg, map[string]any{"max_tokens": 1, "stream": false, "messages": rest})
		if system != "" {
			body["system"] = system
		}
		if idField != "" {
			body[idField] = id
		}
		var out struct {
			Usage *struct {
				Input         *int `json:"input_tokens"`
				CacheRead     int  `json:"cache_read_input_tokens"`
				CacheCreation int  `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		}
		if err := p.postID(ctx, url, id, body, &out); err != nil {
			return 0, err
		}
		if out.Usage == nil || out.Usage.Input == nil {
			return 0, fmt.Errorf("POST %s: the answer has no usage.input_tokens", url)
		}
		return *out.Usage.Input + out.Usage.CacheRead + out.Usage.CacheCreation, nil
	}
	return c
}
