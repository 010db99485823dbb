package client

import (
	"encoding/json"
	"fmt"
	"math/bits"
)

// What a server may claim about a request, and what the client does with a
// claim beyond it (docs/decisions/0212-protocol-violations.md). Every number
// in a response is the server's word; the client uses a token count only
// when it is one the request allows, so that a count of 10¹⁸ can neither
// become 10¹⁸ inter-token latencies in memory nor a throughput figure.
const (
	// completionCapFactor and completionCapSlack: completion_tokens may be
	// at most max_tokens × choices × completionCapFactor +
	// completionCapSlack. Engines stop at max_tokens; the factor leaves
	// room for servers that count something beside it (a thinking budget
	// outside max_tokens, special tokens), the slack for small max_tokens.
	completionCapFactor = 4
	completionCapSlack  = 64
	// maxClaimTokens caps completion_tokens per choice for a request that
	// set no max_tokens (the engine's context is the limit, and no context
	// is 4 Mi tokens of output).
	maxClaimTokens = 1 << 22
	// promptCapSlack: prompt_tokens may be at most the request body's
	// bytes (a token is made of at least one byte of what was sent) plus
	// this, for the chat template's tokens.
	promptCapSlack = 8192
)

// UsageCaps is the most completion and prompt tokens a response to a
// request may claim: maxTokens (0 = none sent) for each of choices, and a
// body of bodyBytes bytes.
func UsageCaps(maxTokens, choices, bodyBytes int) (completion, prompt int) {
	choices = max(choices, 1)
	completion = maxClaimTokens * choices
	if maxTokens > 0 {
		completion = min(completion, maxTokens*choices*completionCapFactor+completionCapSlack)
	}
	return completion, bodyBytes + promptCapSlack
}

// readLimits takes from the extra body what bounds a response's claims: n
// (the choices asked for; refused outside [1, maxChoices]) and
// max_tokens or max_completion_tokens, for requests that set none.
func (c *Client) readLimits(members map[string]json.RawMessage) error {
	c.choices = 1
	if raw, ok := members["n"]; ok {
		var n int
		if json.Unmarshal(raw, &n) != nil || n < 1 || n > maxChoices {
			return fmt.Errorf("client: extra body n = %s: want an integer from 1 to %d (the client measures at most %d choices a request)", raw, maxChoices, maxChoices)
		}
		c.choices = n
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		var m int
		if raw, ok := members[k]; ok && json.Unmarshal(raw, &m) == nil && m > 0 {
			c.extraMaxTokens = max(c.extraMaxTokens, m)
		}
	}
	return nil
}

// claims is what a call tracks of the response's choices and usage: per
// choice, whether it carried output and whether it finished; the
// violations met.
type claims struct {
	choices        int    // choices asked for: an index must be below it
	seen, finished uint64 // bit i: choice i carried output, gave its finish_reason
	violations     uint8  // bit i: Violations()[i] was met
	usageBroken    bool   // a usage was invalid, negative or went backwards: none is used
	capCompletion  int    // UsageCaps
	capPrompt      int
}

// flag notes a violation.
func (c *claims) flag(v Violation) {
	for i, k := range Violations() {
		if k == v {
			c.violations |= 1 << i
		}
	}
}

// list is the violations met, in Violations' order (nil for none).
func (c *claims) list() []Violation {
	if c.violations == 0 {
		return nil
	}
	var out []Violation
	for i, k := range Violations() {
		if c.violations&(1<<i) != 0 {
			out = append(out, k)
		}
	}
	return out
}

// finishedAll reports whether a finish_reason came, and for every choice
// that carried output.
func (c *claims) finishedAll() bool { return c.finished != 0 && c.seen&^c.finished == 0 }

// outputChoices is how many choices carried output.
func (c *claims) outputChoices() int { return bits.OnesCount64(c.seen) }

// checkUsage judges a usage as it arrives: one that is invalid, negative or
// below an earlier one is flagged, and then no usage of the response is
// used.
func (c *claims) checkUsage(u *wireUsage, bad bool, earlier *wireUsage, hadEarlier bool) {
	switch {
	case bad:
		c.flag(ViolationUsageInvalid)
		c.usageBroken = true
	case u.PromptTokens < 0 || u.CompletionTokens < 0 || u.PromptTokensDetails.CachedTokens < 0 ||
		u.CompletionTokensDetails.ReasoningTokens < 0:
		c.flag(ViolationUsageNegative)
		c.usageBroken = true
	case hadEarlier && (u.CompletionTokens < earlier.CompletionTokens || u.PromptTokens < earlier.PromptTokens):
		c.flag(ViolationUsageBackwards)
		c.usageBroken = true
	}
}

// withinCaps reports whether the final usage is one the request allows,
// flagging it when not.
func (c *claims) withinCaps(u *wireUsage) bool {
	ok := u.CompletionTokens <= c.capCompletion && u.PromptTokens <= c.capPrompt &&
		u.PromptTokensDetails.CachedTokens <= u.PromptTokens &&
		u.CompletionTokensDetails.ReasoningTokens <= u.CompletionTokens
	if !ok {
		c.flag(ViolationUsageBeyondCap)
	}
	return ok
}
