package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// startSim serves the built-in engine with a chat template of request and
// message tokens.
func startSim(t *testing.T, dialect string, request, message int) (base, model string) {
	t.Helper()
	p, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p.ChatTemplateTokens, p.ChatTemplateMessageTokens = request, message
	e, err := sim.New(sim.Config{Dialect: dialect, Params: p, MaxRequestTruth: -1})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return ep.BaseURL, ep.Model
}

// usagePromptTokens sends one chat request and returns usage.prompt_tokens.
func usagePromptTokens(t *testing.T, base, model string, msgs []workload.Message) int {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": model, "messages": wireMessages(msgs), "max_tokens": 1, "stream": false})
	resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %s, %v", resp.Status, err)
	}
	return out.Usage.PromptTokens
}

func simPlan(t *testing.T, name, dataset, prompt string) *workload.Plan {
	t.Helper()
	src := fmt.Sprintf("name: %s\nseed: 7\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  requests: 16\n  dataset: %s\n  prompt_tokens: %s\n  output_tokens: 4\n", name, dataset, prompt)
	s, err := scenarios.Parse("inline.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := workload.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSimDiscoversItsTemplate: on the built-in engine of every dialect, with
// its chat-template knobs set, calibration finds exactly the tokens it was
// configured with (through the dialect's tokenizer endpoints, or probe
// requests where the dialect has none), and fitted plans (shared prefixes,
// multi-turn) are then counted by the engine at their targets exactly.
func TestSimDiscoversItsTemplate(t *testing.T) {
	t.Parallel()
	method := map[string]string{
		sim.DialectLlamaCpp: MethodApplyTemplate, sim.DialectVLLM: MethodTokenize,
		sim.DialectSGLang: MethodTokenize, sim.DialectFastDeploy: MethodProbe,
	}
	templates := []struct{ request, message int }{{3, 4}, {4, 26}, {0, 0}, {5, 1}}
	for _, dialect := range sim.Dialects {
		for _, tmpl := range templates {
			t.Run(fmt.Sprintf("%s/%d+%d", dialect, tmpl.request, tmpl.message), func(t *testing.T) {
				t.Parallel()
				base, model := startSim(t, dialect, tmpl.request, tmpl.message)
				ctx := context.Background()
				cfg := Config{BaseURL: base, Model: model, Dialect: dialect}
				res, err := Probe(ctx, cfg)
				if err != nil {
					t.Fatalf("Probe: %v (%q)", err, res.Notes)
				}
				if res.Method != method[dialect] || res.RequestTokens != tmpl.request || res.MessageTokens != tmpl.message ||
					res.TemplateTokens != tmpl.request+tmpl.message || res.TokensPerWord != 1 || len(res.RoleTokens) != 0 || !res.MessagesMeasured {
					t.Fatalf("configured %d per request + %d per message, calibration found %s\n%+v", tmpl.request, tmpl.message, res, res)
				}
				if dialect != sim.DialectLlamaCpp && dialect != sim.DialectFastDeploy {
					// Told nothing, it finds the same (after trying llama.cpp's endpoints).
					anon, err := Probe(ctx, Config{BaseURL: base, Model: model})
					if err != nil || anon.RequestTokens != res.RequestTokens || anon.MessageTokens != res.MessageTokens {
						t.Errorf("without the dialect: %s, %v", anon, err)
					}
				}

				fit := res.Fit()
				plans := []*workload.Plan{
					simPlan(t, "synthetic", "{type: synthetic}", "{dist: uniform, min: 1, max: 120}"),
					simPlan(t, "prefix", "{type: shared_prefix, groups: 2, prompts_per_group: 3, prefix_tokens: 50}", "{dist: uniform, min: 1, max: 60}"),
					simPlan(t, "multi", "{type: multi_turn, turns: 4, prefix_tokens: 20}", "{dist: uniform, min: 1, max: 40}"),
				}
				exact := 0
				for _, p := range plans {
					p = p.WithFit(fit)
					var msgs [][]workload.Message
					var usage []int
					for i := range 12 {
						r := p.Request(i)
						rep, ok := p.FitOf(i)
						if fit.IsZero() {
							rep, ok = workload.FitReport{Target: r.PromptTokens, Expected: r.PromptTokens}, true
						}
						got := usagePromptTokens(t, base, model, r.Messages)
						if !ok || got != rep.Expected {
							t.Fatalf("%s request %d: the engine counts %d, the fit expected %d (target %d, report %+v)", p.Name(), i, got, rep.Expected, r.PromptTokens, rep)
						}
						if rep.Off == 0 {
							exact++
						}
						msgs, usage = append(msgs, r.Messages), append(usage, got)
					}
					// The tokenizer's count of each request is its usage.
					counted, err := Count(ctx, cfg, msgs)
					if dialect == sim.DialectFastDeploy {
						if !errors.Is(err, ErrNoTokenizer) {
							t.Errorf("fastdeploy Count: %v, want ErrNoTokenizer", err)
						}
						continue
					}
					if err != nil || fmt.Sprint(counted.Tokens) != fmt.Sprint(usage) {
						t.Errorf("%s: Count %v (%v), usage %v", p.Name(), counted.Tokens, err, usage)
					}
				}
				// Targets below the template's cost (26 tokens a message) stay
				// above target, by what FitOf reported; the rest are exact.
				if exact == 0 || (tmpl.message < 26 && exact < 30) {
					t.Errorf("only %d of 36 requests fitted exactly", exact)
				}
			})
		}
	}
}
