package run

import (
	"context"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// An agentic replay's calls carry their session in headers and ask for the
// engine's reply, which the Driver threads into the session's next call
// (docs/decisions/1600-agentic-trace-replay.md).

// sessionHeader is the scenario's extra session-affinity header ("" for none).
func sessionHeader(sc scenarios.Scenario) string {
	if t := sc.Workload.Trace; t != nil {
		return t.SessionHeader
	}
	return ""
}

// send sends r through the client, with the engine's reply when the plan
// asks for it.
func send(ctx context.Context, cl *client.Client, r workload.Request, minTokens bool, images *imageBank) (client.Record, *workload.Message) {
	cr := clientRequest(r, minTokens, images)
	if !r.KeepReply {
		return cl.Do(ctx, cr), nil
	}
	rec, reply := cl.DoReply(ctx, cr)
	return rec, replyMessage(reply)
}

// replyMessage is the assistant message of an engine's reply, as a plan's
// history holds it (nil for none).
func replyMessage(r *client.Reply) *workload.Message {
	if r == nil {
		return nil
	}
	m := &workload.Message{Role: "assistant", Content: r.Content}
	for _, c := range r.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, workload.ToolCall{ID: c.ID, Type: c.Type,
			Function: workload.ToolFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}})
	}
	return m
}

// clientMessage is a planned message in the client's terms.
func clientMessage(m workload.Message) client.Message {
	cm := client.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		cm.ToolCalls = append(cm.ToolCalls, client.ToolCall{ID: c.ID, Type: c.Type,
			Function: client.ToolFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}})
	}
	return cm
}
