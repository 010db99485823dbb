package workload_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// agentRun is an agentic replay against the built-in engine, with what each
// request carried and what the engine says happened.
type agentRun struct {
	plan    *workload.Plan
	result  workload.Result
	runErr  error
	sent    map[string]workload.Request // by id: what the Driver sent
	records map[string]client.Record
	replies map[string]string // by id: the content of the engine's reply
	headers map[string]http.Header
	truth   map[string]sim.RequestTruth
}

// runAgentic replays sc against its built-in engine through a proxy that
// keeps each request's headers (what a router would see).
func runAgentic(t *testing.T, sc scenarios.Scenario) agentRun {
	t.Helper()
	plan, err := workload.NewPlan(sc)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sim.New(sim.Config{Dialect: sc.Engine.Dialect, Params: *sc.Engine.Sim.(*sim.Params)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ep, err := eng.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop(context.Background())
	a := agentRun{plan: plan, sent: map[string]workload.Request{}, records: map[string]client.Record{},
		replies: map[string]string{}, headers: map[string]http.Header{}, truth: map[string]sim.RequestTruth{}}
	var mu sync.Mutex
	// The headers each request went out with, as a router in front of the
	// engine would read them.
	keep := roundTripper(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		a.headers[r.Header.Get("X-Request-Id")] = r.Header.Clone()
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	start := time.Now()
	cl, err := client.New(client.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: ep.Dialect, Start: start,
		IncludeUsage: true, SessionHeader: sc.Workload.Trace.SessionHeader, HTTPClient: &http.Client{Transport: keep}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	send := workload.OutcomeSenderFunc(func(ctx context.Context, r workload.Request) workload.Outcome {
		rec, reply := cl.DoReply(ctx, agentClientRequest(r))
		mu.Lock()
		a.sent[r.ID], a.records[r.ID] = r, rec
		if reply != nil {
			a.replies[r.ID] = reply.Content
		}
		mu.Unlock()
		o := workload.Outcome{OK: rec.OK(), Canceled: rec.ErrorClass == client.ErrCanceled}
		if reply != nil && r.KeepReply {
			o.Reply = &workload.Message{Role: "assistant", Content: reply.Content}
		}
		return o
	})
	a.result, a.runErr = (&workload.Driver{Plan: plan, Sender: send, Start: start}).Run(ctx, nil)
	for _, tr := range eng.Truth() {
		a.truth[tr.HeaderID] = tr
	}
	return a
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func agentClientRequest(r workload.Request) client.Request {
	cr := asClientRequest(r)
	for i, m := range r.Messages {
		cr.Messages[i].ToolCallID = m.ToolCallID
	}
	cr.Session = r.Session
	return cr
}

// TestAgenticReplayAgainstTheBuiltInEngine replays both agentic examples:
// every call of every session is sent, each carrying its session in both
// headers; each call's history holds the engine's own earlier replies word
// for word (not the planned stand-ins); the engine counts the planned
// prompt; and the engine's prefix cache (its ground truth) sees each
// session's history as a prefix of its next call.
func TestAgenticReplayAgainstTheBuiltInEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end against the built-in engine")
	}
	t.Parallel()
	quiet.Busy(t)
	for _, example := range []string{"agentic-trace.yaml", "agentic-copilot.yaml", "agentic-copilot-azure.yaml"} {
		t.Run(example, func(t *testing.T) {
			sc := exampleScenario(t, example)
			sc.Workload.Trace.TimeScale = 0.02
			sc.Workload.Trace.SessionHeader = "X-Affinity"
			a := runAgentic(t, sc)
			if a.runErr != nil {
				t.Fatal(a.runErr)
			}
			calls := a.plan.Phases()[0].Requests
			for id, rec := range a.records {
				if !rec.OK() {
					t.Errorf("%s: %s %s", id, rec.ErrorClass, rec.Error)
				}
			}
			if len(a.records) != calls {
				t.Fatalf("%d calls sent, the trace has %d", len(a.records), calls)
			}
			checkThreaded(t, a)
		})
	}
}

func checkThreaded(t *testing.T, a agentRun) {
	t.Helper()
	sessions := map[string]bool{}
	for id, r := range a.sent {
		rec, tr := a.records[id], a.truth[id]
		if !rec.OK() {
			t.Fatalf("%s failed: %s %s", id, rec.ErrorClass, rec.Error)
		}
		if h := a.headers[id]; h.Get("X-Session-Id") != r.Session || h.Get("X-Affinity") != r.Session || r.Session == "" {
			t.Errorf("%s: session headers %q, %q; want %q", id, h.Get("X-Session-Id"), h.Get("X-Affinity"), r.Session)
		}
		if rec.Session != r.Session {
			t.Errorf("%s: record's session %q, want %q", id, rec.Session, r.Session)
		}
		sessions[r.Session] = true
		if tr.PromptTokens != r.PromptTokens || rec.PromptTokens != r.PromptTokens || rec.OutputTokens != r.MaxTokens {
			t.Errorf("%s: engine counted %d prompt tokens (usage %d), planned %d; output %d of %d",
				id, tr.PromptTokens, rec.PromptTokens, r.PromptTokens, rec.OutputTokens, r.MaxTokens)
		}
		if rec.CachedTokens != tr.CachedTokens {
			t.Errorf("%s: usage says %d cached tokens, the engine's truth %d", id, rec.CachedTokens, tr.CachedTokens)
		}
		// Every assistant message is the engine's reply to the call before
		// it in the session: find that call by its history's length.
		for k, m := range r.Messages {
			if m.Role != "assistant" {
				continue
			}
			prev, ok := previousCall(a, r, k)
			if !ok {
				t.Errorf("%s: assistant message %d answers no call of session %s", id, k, r.Session)
				continue
			}
			if m.Content != a.replies[prev.ID] || m.Content == "" {
				t.Errorf("%s: message %d is not the engine's reply to %s:\n%.80q\n%.80q", id, k, prev.ID, m.Content, a.replies[prev.ID])
			}
			// The prompt of that call is a prefix of this one: the engine's
			// prefix cache (blocks of 16 tokens) holds it.
			if tr.CachedTokens < prev.PromptTokens/16*16 {
				t.Errorf("%s: %d cached tokens, but the %d-token prompt of %s is its prefix", id, tr.CachedTokens, prev.PromptTokens, prev.ID)
			}
		}
	}
	if len(sessions) < 3 {
		t.Errorf("%d sessions seen, want the trace's 3 (a subagent among them)", len(sessions))
	}
}

// previousCall is the call of r's session whose history is r's first k
// messages: the one the assistant message k answers.
func previousCall(a agentRun, r workload.Request, k int) (workload.Request, bool) {
	for _, p := range a.sent {
		if p.Session != r.Session || len(p.Messages) != k {
			continue
		}
		same := true
		for i := range k {
			if p.Messages[i].Content != r.Messages[i].Content || p.Messages[i].Role != r.Messages[i].Role {
				same = false
				break
			}
		}
		if same {
			return p, true
		}
	}
	return workload.Request{}, false
}
