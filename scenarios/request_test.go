package scenarios

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestSection(t *testing.T) {
	t.Parallel()
	s, err := parseIn("r.yaml", []byte(head+`workload: {concurrency: 1, duration: 1s}
request:
  endpoint: completions
  stream: false
  extra_body: {temperature: 0.7, logprobs: true, stop: ["\n"], lora: {name: a}}
  headers: {X-Route: "${ROUTE}"}
`), func(k string) (string, bool) { return map[string]string{"ROUTE": "blue"}[k], k == "ROUTE" })
	if err != nil {
		t.Fatal(err)
	}
	r := s.Request
	if r.Endpoint != EndpointCompletions || r.Streamed() {
		t.Errorf("endpoint %q streamed %v", r.Endpoint, r.Streamed())
	}
	want := map[string]any{"temperature": 0.7, "logprobs": true, "stop": []any{"\n"}, "lora": map[string]any{"name": "a"}}
	if diff := cmp.Diff(want, r.ExtraBody); diff != "" {
		t.Errorf("extra_body (-want +got):\n%s", diff)
	}
	if r.Headers["X-Route"] != "blue" {
		t.Errorf("headers %v: want ${ROUTE} expanded", r.Headers)
	}
	// The resolved copy keeps ${VAR}, not its value (a header may be a secret).
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `X-Route: "${ROUTE}"`) || strings.Contains(string(out), "blue") {
		t.Errorf("resolved scenario:\n%s", out)
	}
	back, err := withEngine(parse("resolved.yaml", out, s.src, func(k string) (string, bool) { return "blue", k == "ROUTE" }))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, back, sameScenario); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestRequestAndDialectErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, yaml, want string }{
		{"endpoint", head + "workload: {concurrency: 1, duration: 1s}\nrequest: {endpoint: moderations}\n",
			`f.yaml:4:21: request.endpoint: want chat, completions, responses, messages, embeddings, rerank or tei-rerank, got "moderations"`},
		{"a field the plan sets", head + "workload: {concurrency: 1, duration: 1s}\nrequest: {extra_body: {max_tokens: 9}}\n",
			`request.extra_body.max_tokens: llmbench sets max_tokens itself`},
		{"duplicate header", head + "workload: {concurrency: 1, duration: 1s}\nrequest: {headers: {A: x, A: y}}\n",
			`request.headers.A: duplicate key`},
		{"unknown dialect", "name: x\nmodel: m\nengine: {kind: external, base_url: \"http://h/v1\", dialect: bogus}\nworkload: {concurrency: 1, duration: 1s}\n",
			`engine.dialect: unknown dialect "bogus": want sglang, vllm, fastdeploy, tgi, llamacpp, triton or trtllm, or leave it out`},
		{"unknown sim dialect", "name: x\nengine: {kind: sim, dialect: tgi}\nworkload: {concurrency: 1, duration: 1s}\n",
			`engine.dialect: the built-in engine speaks sglang, vllm, fastdeploy or llamacpp, not "tgi"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(tt.yaml), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestResponsesOutputLengthReserved: the responses endpoint's output
// length, like max_tokens, is the plan's to set.
func TestResponsesOutputLengthReserved(t *testing.T) {
	t.Parallel()
	yaml := "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1s}\nrequest: {endpoint: responses, extra_body: {max_output_tokens: 9}}\n"
	if _, err := parseIn("f.yaml", []byte(yaml), noEnv); err == nil || !strings.Contains(err.Error(), "request.extra_body.max_output_tokens: llmbench sets max_output_tokens itself") {
		t.Errorf("error %v", err)
	}
	yaml = "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1s}\nrequest: {endpoint: responses, extra_body: {input: x}}\n"
	if _, err := parseIn("f.yaml", []byte(yaml), noEnv); err == nil || !strings.Contains(err.Error(), "request.extra_body.input") {
		t.Errorf("error %v", err)
	}
}
