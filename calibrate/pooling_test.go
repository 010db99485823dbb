package calibrate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
)

// TestPoolingNotCalibrated: a pooling endpoint's calibration sends nothing
// and says why; its fit is none.
func TestPoolingNotCalibrated(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, name := range []string{endpoints.Embeddings, endpoints.Rerank, endpoints.TEIRerank} {
		res, err := Probe(t.Context(), Config{BaseURL: srv.URL + "/v1", Endpoint: name, Dialect: "vllm"})
		if err != nil || res.Method != MethodNone || res.Endpoint != name || len(res.Notes) != 1 ||
			!strings.Contains(res.Notes[0], "no chat template") || res.Fit().RequestTokens != 0 {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("calibration sent %d requests, want none", n)
	}
}
