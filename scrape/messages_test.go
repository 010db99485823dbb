package scrape

import (
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
)

// TestVLLMCountsMessagesRequests: vLLM's request counter by handler counts
// the Messages endpoint's requests beside chat's (the registry names
// /v1/messages), and still not /v1/models'.
func TestVLLMCountsMessagesRequests(t *testing.T) {
	t.Parallel()
	base := fixture(t, "vllm_v1.txt")
	// The fixture ends with http_requests_total (chat's and /v1/models').
	extra := "http_requests_total{handler=\"" + endpoints.APIRoot + endpoints.MessagesPath + "\",method=\"POST\",status=\"2xx\"} 40.0\n"
	d, err := DialectFor("vllm")
	if err != nil {
		t.Fatal(err)
	}
	count := func(text []byte) float64 {
		fams, err := Parse(text, ctText)
		if err != nil {
			t.Fatal(err)
		}
		return d.Map(fams).Counters[RequestsReceived]
	}
	before, after := count(base), count(append(append([]byte(nil), base...), extra...))
	if after-before != 40 {
		t.Errorf("requests received %v, then %v with 40 to /v1/messages: want 40 more", before, after)
	}
}
