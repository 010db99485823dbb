package scrape

import (
	"testing"

	"github.com/llmbench-org/llmbench/engines"
)

// TestPoolingEndpointsCounted: vLLM's request counter by handler counts the
// embeddings and rerank paths, TEI's /rerank at the server's root among
// them, and nothing else the server serves.
func TestPoolingEndpointsCounted(t *testing.T) {
	t.Parallel()
	fams, err := Parse([]byte(`# TYPE http_requests_total counter
http_requests_total{handler="/v1/embeddings",method="POST",status="2xx"} 5
http_requests_total{handler="/v1/rerank",method="POST",status="2xx"} 3
http_requests_total{handler="/rerank",method="POST",status="2xx"} 2
http_requests_total{handler="/v1/models",method="GET",status="2xx"} 7
http_requests_total{handler="/score",method="POST",status="2xx"} 11
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 0
`), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	d, err := DialectFor(engines.VLLM)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Map(fams).Counters[RequestsReceived]; got != 10 {
		t.Errorf("requests received = %v, want the pooling endpoints' 10", got)
	}
}
