package calibrate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/workload"
)

// newResponsesProbe is newProbe for the Responses API
// (endpoints.KindResponses): real requests with the messages as the input
// list, max_output_tokens 1, not streamed; the prompt's count is
// usage.input_tokens (the chat template applied, as the engine counts it).
func newResponsesProbe(cfg Config, p poster, base string) *counter {
	url := endpoints.URL(base, cfg.ep.Path)
	c := &counter{family: familyUsage, method: MethodProbe, source: "POST " + url + " (max_output_tokens 1, usage.input_tokens)"}
	idField, _ := client.IDField(cfg.Dialect)
	sent := 0
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		sent++
		id := client.ProbeIDPrefix + strconv.Itoa(sent)
		body := withModel(cfg, map[string]any{"max_output_tokens": 1, "stream": false, "input": wireMessages(msgs)})
		if idField != "" {
			body[idField] = id
		}
		var out struct {
			Usage *struct {
				InputTokens *int `json:"input_tokens"`
			} `json:"usage"`
		}
		if err := p.postID(ctx, url, id, body, &out); err != nil {
			return 0, err
		}
		if out.Usage == nil || out.Usage.InputTokens == nil {
			return 0, fmt.Errorf("POST %s: the answer has no usage.input_tokens", url)
		}
		return *out.Usage.InputTokens, nil
	}
	return c
}
