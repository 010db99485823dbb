package calibrate

import "fmt"

// poolingResult is calibration's answer for a pooling endpoint (embeddings,
// rerank): nothing to fit, and nothing is sent. No chat template applies,
// and what the engine adds to each input (an encoder's [CLS] and [SEP], a
// cross-encoder's pair separators) is the model's, per input: the inputs
// go as planned and each answer's usage says what the engine counted,
// which the summary's prompt error shows beside the plan (decision 1400).
func poolingResult(cfg Config) Result {
	return Result{Method: MethodNone, Endpoint: cfg.Endpoint, Notes: []string{fmt.Sprintf(
		"%s: no chat template to fit; the inputs go as planned and the engine's usage counts them", cfg.ep.Name)}}
}
