package launch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseModelIDs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"vllm", `{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B","object":"model","owned_by":"vllm","max_model_len":4096}]}`, []string{"meta-llama/Llama-3.1-8B"}},
		{"several, empty ids skipped", `{"data":[{"id":"base"},{"id":""},{"id":"lora-a"}]}`, []string{"base", "lora-a"}},
		{"no data", `{"object":"list"}`, nil},
		{"not JSON", `<html>503</html>`, nil},
		{"wrong shape", `{"data":"x"}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, parseModelIDs([]byte(c.in))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseModelIDs(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"id":"m"}]}`))
	f.Add([]byte(`{"data":[{"id":""},{"id":"x","extra":[1,2]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, id := range parseModelIDs(b) {
			if id == "" {
				t.Fatalf("empty id from %q", b)
			}
		}
	})
}

// waitReady keeps probing through refusals and non-200 answers, and stops on
// the first 200.
func TestWaitReadyAfterFailures(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			http.Error(w, "Loading model", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	if err := waitReady(context.Background(), make(chan struct{}), srv.URL+"/health", "", time.Minute); err != nil {
		t.Fatalf("waitReady: %v", err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("%d probes, want 3 (two 503s, then 200)", got)
	}
}

func TestWaitReadyFails(t *testing.T) {
	t.Parallel()
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Loading model", http.StatusServiceUnavailable)
	}))
	t.Cleanup(unavailable.Close) // not defer: the parallel subtests run after this function returns
	// A server that never answers: the exit of the engine must cut the probe short.
	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(hang) }) // runs first: lets the hanging handlers return

	closed := make(chan struct{})
	close(closed)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	t.Run("timeout says what the last probe got", func(t *testing.T) {
		t.Parallel()
		err := waitReady(context.Background(), make(chan struct{}), unavailable.URL+"/health", "", 300*time.Millisecond)
		var nr *notReadyError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), "503 Service Unavailable") {
			t.Errorf("err = %v, want not ready with the last 503", err)
		}
	})
	t.Run("engine exited", func(t *testing.T) {
		t.Parallel()
		if err := waitReady(context.Background(), closed, hanging.URL, "", time.Minute); !errors.Is(err, errExited) {
			t.Errorf("err = %v, want errExited", err)
		}
	})
	t.Run("engine exits during a hanging probe", func(t *testing.T) {
		t.Parallel()
		exited := make(chan struct{})
		time.AfterFunc(100*time.Millisecond, func() { close(exited) })
		if err := waitReady(context.Background(), exited, hanging.URL, "", time.Minute); !errors.Is(err, errExited) {
			t.Errorf("err = %v, want errExited", err)
		}
	})
	t.Run("ctx cancelled", func(t *testing.T) {
		t.Parallel()
		if err := waitReady(cancelled, make(chan struct{}), hanging.URL, "", time.Minute); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

// An engine started with an API key refuses probes without it.
func TestProbesCarryTheAPIKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"data":[{"id":"served"}]}`))
	}))
	defer srv.Close()
	if err := waitReady(context.Background(), make(chan struct{}), srv.URL+"/v1/models", "sk-test", time.Minute); err != nil {
		t.Errorf("waitReady with the key: %v", err)
	}
	if got := firstModelID(context.Background(), srv.URL+"/v1/models", "sk-test"); got != "served" {
		t.Errorf("firstModelID with the key = %q", got)
	}
	if got := firstModelID(context.Background(), srv.URL+"/v1/models", ""); got != "" {
		t.Errorf("firstModelID without the key = %q, want \"\"", got)
	}
}
