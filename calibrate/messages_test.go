package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/workload"
)

// messagesPromptTokens sends one Messages request as the client would and
// returns every input token its usage counts.
func messagesPromptTokens(t *testing.T, base, model string, msgs []workload.Message) int {
	t.Helper()
	in := make([]client.Message, len(msgs))
	for i, m := range msgs {
		in[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	system, rest := client.SplitSystem(in)
	body := map[string]any{"model": model, "messages": rest, "max_tokens": 1}
	if system != "" {
		body["system"] = system
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/messages", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			Input     int `json:"input_tokens"`
			CacheRead int `json:"cache_read_input_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("messages: %s, %v", resp.Status, err)
	}
	return out.Usage.Input + out.Usage.CacheRead
}

// TestSimMessages: calibrating the Messages endpoint of the built-in engine
// (through vLLM's tokenizer, and by probe requests where the dialect has
// none) finds its template, and fitted plans whose prompts carry system
// messages (shared prefixes, multi-turn) are counted by the engine's
// Messages usage at the fit's expectation; the tokenizer's Count of each is
// that usage.
func TestSimMessages(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{sim.DialectVLLM, sim.DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			base, model := startSim(t, dialect, 3, 4)
			ctx := context.Background()
			cfg := Config{BaseURL: base, Model: model, Dialect: dialect, Endpoint: endpoints.Messages}
			res, err := Probe(ctx, cfg)
			if err != nil {
				t.Fatalf("Probe: %v (%q)", err, res.Notes)
			}
			if res.RequestTokens != 3 || res.MessageTokens != 4 || res.Endpoint != endpoints.Messages {
				t.Fatalf("calibration found %s", res)
			}
			fit := res.Fit()
			for _, p := range []*workload.Plan{
				simPlan(t, "prefix", "{type: shared_prefix, groups: 2, prompts_per_group: 3, prefix_tokens: 50}", "{dist: uniform, min: 1, max: 60}"),
				simPlan(t, "multi", "{type: multi_turn, turns: 4, prefix_tokens: 20}", "{dist: uniform, min: 1, max: 40}"),
			} {
				p = p.WithFit(fit)
				var msgs [][]workload.Message
				var usage []int
				for i := range 8 {
					r := p.Request(i)
					rep, ok := p.FitOf(i)
					got := messagesPromptTokens(t, base, model, r.Messages)
					if !ok || got != rep.Expected {
						t.Fatalf("%s request %d: the engine counts %d, the fit expected %d (%+v)", p.Name(), i, got, rep.Expected, rep)
					}
					msgs, usage = append(msgs, r.Messages), append(usage, got)
				}
				if dialect == sim.DialectFastDeploy {
					continue // no tokenizer to Count with
				}
				counted, err := Count(ctx, cfg, msgs)
				if err != nil || fmt.Sprint(counted.Tokens) != fmt.Sprint(usage) {
					t.Errorf("%s: Count %v (%v), usage %v", p.Name(), counted.Tokens, err, usage)
				}
			}
		})
	}
}
