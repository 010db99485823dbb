package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/llmbench-org/llmbench/internal/httppolicy"
)

// errExited: the engine exited while Start waited for it.
var errExited = errors.New("the engine exited")

// notReadyError: the engine did not answer 200 in time; last is what the
// last probe got (nil if none ran).
type notReadyError struct{ last error }

func (e *notReadyError) Error() string { return "not ready in time (" + e.lastProbe() + ")" }

func (e *notReadyError) lastProbe() string {
	if e.last == nil {
		return "no probe answered"
	}
	return "last probe: " + e.last.Error()
}

// probeTimeout bounds one readiness or model request: an engine that accepts
// connections but cannot answer yet must not stall the wait.
const probeTimeout = 5 * time.Second

// probeClient talks to the engine the way every request does
// (internal/httppolicy), leaving no kept-alive connection behind once the
// engine is ready.
var probeClient = func() *http.Client {
	c := httppolicy.Client(probeTimeout)
	c.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}()

// waitReady polls GET url until it answers 200. It returns an error wrapping
// errExited when exited closes first, a *notReadyError after timeout, or
// ctx's error.
func waitReady(ctx context.Context, exited <-chan struct{}, url, apiKey string, timeout time.Duration) error {
	alive, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		// An engine that exits cuts short a probe in flight: fail fast.
		select {
		case <-exited:
			cancel(errExited)
		case <-alive.Done():
		}
	}()
	errTimeout := errors.New("readiness timeout")
	ctx, cancelT := context.WithTimeoutCause(alive, timeout, errTimeout)
	defer cancelT()

	delay := 50 * time.Millisecond
	t := time.NewTimer(0)
	defer t.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			if errors.Is(cause, errTimeout) {
				return &notReadyError{last: last}
			}
			return cause
		case <-t.C:
		}
		err := probe(ctx, url, apiKey)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil { // not a probe cut short by the wait's end
			last = err
		}
		t.Reset(delay)
		delay = min(2*delay, time.Second) // model loading takes minutes: no need to poll fast
	}
}

// probe is one GET of url; nil when it answered 200.
func probe(ctx context.Context, url, apiKey string) error {
	resp, err := getEngine(ctx, url, apiKey)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// firstModelID asks the engine which model it serves (the name requests must
// carry, which --served-model-name or --alias may have changed); "" when it
// does not say.
func firstModelID(ctx context.Context, url, apiKey string) string {
	resp, err := getEngine(ctx, url, apiKey)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	ids := parseModelIDs(b)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// getEngine is a GET to the engine, with the API key if there is one.
func getEngine(ctx context.Context, url, apiKey string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	return probeClient.Do(req)
}

// parseModelIDs reads the ids of an OpenAI /v1/models answer,
// {"object":"list","data":[{"id":"..."}, ...]}; nil when it is not one.
func parseModelIDs(b []byte) []string {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids
}
