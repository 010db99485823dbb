package workload

import "context"

// Outcome is how a request ended, as far as the Driver needs to know: for
// the abort conditions, per-phase counts, and an automatic sweep's rates.
type Outcome struct {
	OK bool // the request succeeded
	// Canceled says the run itself aborted the request (its context was
	// canceled): neither a success nor a failure for the abort conditions.
	Canceled bool
	// Unreachable says the request never got a connection to the engine
	// (refused, unroutable): a streak of them means the engine is gone.
	Unreachable bool
	// Unavailable says the engine answered that it cannot serve now (HTTP
	// 503, as an engine restarting does). With Unreachable, it makes a
	// closed-loop user back off before its next request (Backoff).
	Unavailable bool
	// Reply is the assistant message the engine returned (its text and tool
	// calls), when the request asked for it (an agentic replay's calls:
	// the next call's history holds it); nil otherwise.
	Reply *Message
}

// OutcomeSender is a Sender that says how each request ended. When the
// Driver's Sender implements it, the Driver calls SendOutcome instead of
// Send; a plain Sender's requests all count as successful.
type OutcomeSender interface {
	SendOutcome(ctx context.Context, r Request) Outcome
}

// OutcomeSenderFunc lets a plain function act as a Sender that reports outcomes.
type OutcomeSenderFunc func(ctx context.Context, r Request) Outcome

var (
	_ Sender        = OutcomeSenderFunc(nil)
	_ OutcomeSender = OutcomeSenderFunc(nil)
)

// Send calls f and drops the outcome.
func (f OutcomeSenderFunc) Send(ctx context.Context, r Request) { f(ctx, r) }

// SendOutcome calls f.
func (f OutcomeSenderFunc) SendOutcome(ctx context.Context, r Request) Outcome { return f(ctx, r) }
