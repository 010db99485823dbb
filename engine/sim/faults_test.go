package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// rawStream is a tolerant read of one stream: every data line, whether each
// parsed, when each arrived, and how the stream ended.
type rawStream struct {
	status    int
	header    http.Header
	firstByte time.Duration
	lines     []string
	bad       int // data lines that are not valid JSON
	arrivals  []time.Duration
	done      bool
	readErr   error
	body      []byte
}

func readRaw(t *testing.T, url, id string, extra map[string]any) rawStream {
	t.Helper()
	fields := map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b c d"}},
		"stream":   true, "stream_options": map[string]any{"include_usage": true},
		"max_tokens": 10, "ignore_eos": true, "rid": id,
	}
	for k, v := range extra {
		fields[k] = v
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/chat/completions", bytes.NewReader(chatBody(fields)))
	clock := clockSince()
	resp, err := newClient().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	rs := rawStream{status: resp.StatusCode, header: resp.Header, firstByte: clock()}
	if resp.StatusCode != http.StatusOK {
		rs.body, _ = io.ReadAll(resp.Body)
		return rs
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			rs.arrivals = append(rs.arrivals, clock())
			if data == "[DONE]" {
				rs.done = true
			} else {
				rs.lines = append(rs.lines, data)
				if !json.Valid([]byte(data)) {
					rs.bad++
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rs.readErr = err
			}
			return rs
		}
	}
}

func faultEngine(t *testing.T, f Faults) (*Engine, string) {
	t.Helper()
	e, ep := startEngine(t, Config{Faults: f})
	return e, ep.BaseURL
}

func truthOf(t *testing.T, e *Engine, id string) RequestTruth {
	t.Helper()
	for _, tr := range e.Truth() {
		if tr.ID == id {
			return tr
		}
	}
	t.Fatalf("no truth for %s", id)
	return RequestTruth{}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("error statuses", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{ErrorRate: 1, ErrorStatuses: []int{429, 503}})
		rs := readRaw(t, url, "err-1", nil)
		if rs.status != 429 && rs.status != 503 {
			t.Fatalf("status %d, want 429 or 503", rs.status)
		}
		if rs.header.Get("Retry-After") != "1" {
			t.Error("no Retry-After")
		}
		var body apiError
		if err := json.Unmarshal(rs.body, &body); err != nil || body.Error.Code != rs.status || body.Error.Message == "" {
			t.Errorf("error body %s: %v", rs.body, err)
		}
		tr := truthOf(t, e, "err-1")
		if tr.Status != rs.status || tr.Outcome != OutcomeRejected || !slices.Contains(tr.Faults, FaultError) {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("reset mid-stream", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{ResetRate: 1, AfterTokens: 3})
		rs := readRaw(t, url, "reset-1", nil)
		if rs.readErr == nil || rs.done {
			t.Fatalf("stream ended cleanly (done %v), want a broken connection", rs.done)
		}
		if got := countContent(rs); got != 3 {
			t.Errorf("%d content tokens before the reset, want 3", got)
		}
		tr := truthOf(t, e, "reset-1")
		if tr.Outcome != OutcomeBroken || !slices.Contains(tr.Faults, FaultReset) || tr.OutputTokens != 3 {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("stall", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{StallRate: 1, StallFor: 300 * time.Millisecond, AfterTokens: 2})
		rs := readRaw(t, url, "stall-1", nil)
		if !rs.done || rs.bad != 0 {
			t.Fatalf("stream did not complete cleanly: done %v bad %d err %v", rs.done, rs.bad, rs.readErr)
		}
		// Lines: role+first token arrive together, so the gap before the
		// third token's chunk holds the stall.
		var maxGap time.Duration
		for i := 1; i < len(rs.arrivals); i++ {
			maxGap = max(maxGap, rs.arrivals[i]-rs.arrivals[i-1])
		}
		if maxGap < 300*time.Millisecond {
			t.Errorf("largest gap between chunks %v, want the 300ms stall", maxGap)
		}
		tr := truthOf(t, e, "stall-1")
		if tr.Outcome != OutcomeOK || !slices.Contains(tr.Faults, FaultStall) || tr.TokenFlushes[2]-tr.TokenFlushes[1] < 300*time.Millisecond {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("malformed chunk", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{MalformedRate: 1})
		rs := readRaw(t, url, "bad-1", nil)
		if rs.bad != 1 || !rs.done {
			t.Errorf("%d malformed data lines, done %v; want 1 and a complete stream", rs.bad, rs.done)
		}
		if tr := truthOf(t, e, "bad-1"); !slices.Contains(tr.Faults, FaultMalformed) {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("missing done", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{MissingDoneRate: 1})
		rs := readRaw(t, url, "nodone-1", nil)
		if rs.done || rs.readErr != nil || countContent(rs) != 10 {
			t.Errorf("done %v, err %v, %d tokens; want a clean end without [DONE] after 10 tokens", rs.done, rs.readErr, countContent(rs))
		}
		if tr := truthOf(t, e, "nodone-1"); tr.Outcome != OutcomeBroken || !slices.Contains(tr.Faults, FaultMissingDone) {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("slow first byte", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{SlowFirstByteRate: 1, SlowFirstByte: 250 * time.Millisecond})
		rs := readRaw(t, url, "slow-1", nil)
		if rs.firstByte < 250*time.Millisecond || !rs.done {
			t.Errorf("first byte after %v (done %v), want >= 250ms", rs.firstByte, rs.done)
		}
		if tr := truthOf(t, e, "slow-1"); !slices.Contains(tr.Faults, FaultSlowFirstByte) {
			t.Errorf("truth = %+v", tr)
		}
	})
	t.Run("no faults at rate 0", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{ErrorRate: 0, ResetRate: 0})
		rs := readRaw(t, url, "clean-1", nil)
		if !rs.done || rs.bad != 0 {
			t.Errorf("clean stream broken: %+v", rs)
		}
		if tr := truthOf(t, e, "clean-1"); len(tr.Faults) != 0 {
			t.Errorf("faults %v", tr.Faults)
		}
	})
}

func countContent(rs rawStream) int {
	n := 0
	for _, l := range rs.lines {
		var c chunk
		if json.Unmarshal([]byte(l), &c) == nil && len(c.Choices) > 0 {
			n += len(strings.Fields(c.Choices[0].Delta.Content))
		}
	}
	return n
}

func TestMetricsFaults(t *testing.T) {
	t.Parallel()
	get := func(t *testing.T, url string, timeout time.Duration) (*http.Response, []byte, error) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	t.Run("status", func(t *testing.T) {
		t.Parallel()
		_, ep := startEngine(t, Config{Faults: Faults{MetricsFailRate: 1, MetricsFailStatus: 503}})
		resp, _, err := get(t, ep.MetricsURL, 5*time.Second)
		if err != nil || resp.StatusCode != 503 {
			t.Errorf("resp %v err %v, want 503", resp, err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		_, ep := startEngine(t, Config{Faults: Faults{MetricsFailRate: 1, MetricsFailMode: "timeout", MetricsDelay: time.Minute}})
		_, _, err := get(t, ep.MetricsURL, 200*time.Millisecond)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v, want the scraper's deadline", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		_, ep := startEngine(t, Config{Faults: Faults{MetricsFailRate: 1, MetricsFailMode: "malformed"}})
		resp, body, err := get(t, ep.MetricsURL, 5*time.Second)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("resp %v err %v", resp, err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err == nil {
			t.Errorf("malformed exposition parsed: %q", body)
		}
	})
	t.Run("rate", func(t *testing.T) {
		t.Parallel()
		_, ep := startEngine(t, Config{Faults: Faults{MetricsFailRate: 0.5}})
		failed := 0
		for range 40 {
			resp, _, err := get(t, ep.MetricsURL, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				failed++
			}
		}
		if failed < 8 || failed > 32 {
			t.Errorf("%d of 40 scrapes failed at rate 0.5", failed)
		}
	})
}

// TestRestartResetsCounters: a restart cuts in-flight streams, answers 503
// while down, and every counter starts again from zero.
func TestRestartResetsCounters(t *testing.T) {
	t.Parallel()
	p, _ := Preset("tiny")
	p.DecodeBase = 5 * time.Millisecond
	e, ep := startEngine(t, Config{Params: p, Faults: Faults{RestartDowntime: 300 * time.Millisecond}})
	if rs := readRaw(t, ep.BaseURL, "before", nil); !rs.done {
		t.Fatal("first request failed")
	}
	if v := value(t, scrape(t, ep.MetricsURL), "sglang:num_requests_total"); v != 1 {
		t.Fatalf("num_requests_total %v before the restart", v)
	}
	got := make(chan rawStream)
	go func() { got <- readRaw(t, ep.BaseURL, "during", map[string]any{"max_tokens": 400}) }()
	// The restart comes once the engine's own gauge says the request runs,
	// not after a fixed 100 ms: beside two CPU hogs under -race the request
	// reached the engine after the restart and its 300-ms downtime, and
	// was served whole.
	for deadline := time.Now().Add(30 * time.Second); value(t, scrape(t, ep.MetricsURL), "sglang:num_running_reqs") < 1; {
		if time.Now().After(deadline) {
			t.Fatal("the request was not running after 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.Restart()
	rs := <-got
	if rs.done || rs.readErr == nil {
		t.Errorf("in-flight stream survived the restart: done %v err %v", rs.done, rs.readErr)
	}
	// The request while down must come within the downtime: one answered
	// after the downtime's end may have reached the engine after it (the
	// machine's delay), and is left undecided, said so; one answered 200
	// before the end is the engine's error.
	sent := time.Now()
	downRS := readRaw(t, ep.BaseURL, "down", nil)
	servedDown := 0
	if downRS.status != 503 {
		d := e.Downtimes()
		switch answered := sent.Add(downRS.firstByte); {
		case downRS.status == 200 && len(d) == 1 && answered.After(d[0].End):
			t.Logf("the request sent while down was answered %v after the downtime ended (a busy machine): whether it came within it is undecided", answered.Sub(d[0].End))
			servedDown = 1
		default:
			t.Errorf("status %d while down, want 503 (downtimes %v)", downRS.status, d)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.down() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if rs := readRaw(t, ep.BaseURL, "after", nil); !rs.done {
		t.Fatal("request after the restart failed")
	}
	m := scrape(t, ep.MetricsURL)
	if v := value(t, m, "sglang:num_requests_total"); v != float64(1+servedDown) {
		t.Errorf("num_requests_total %v after the restart, want %d (reset, then the requests served since)", v, 1+servedDown)
	}
	if e.Restarts() != 1 {
		t.Errorf("%d restarts", e.Restarts())
	}
	if tr := truthOf(t, e, "during"); tr.Outcome != OutcomeBroken || !slices.Contains(tr.Faults, FaultRestart) {
		t.Errorf("truth of the cut request = %+v", tr)
	}
}

// TestDialectSwitch: Faults.DialectSwitchAfter changes /metrics from one
// family's names to another's, a fresh set that had counted
// DialectSwitchPrior requests, and says when (ground truth); requests go on.
func TestDialectSwitch(t *testing.T) {
	t.Parallel()
	const after = 500 * time.Millisecond
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Faults: Faults{DialectSwitchAfter: after, DialectSwitchTo: DialectSGLang, DialectSwitchPrior: 1000}})
	if rs := readRaw(t, ep.BaseURL, "before", nil); !rs.done {
		t.Fatal("request before the switch failed")
	}
	m := scrape(t, ep.MetricsURL)
	// The checks of the vLLM side hold only if the request and the scrape
	// both came before the switch: on a machine busy enough to take longer
	// than `after` for them they are left undecided (said so); the switch's
	// own time and everything after it are checked either way.
	_, early := e.DialectSwitchedAt()
	if early {
		t.Logf("the request and the scrape before the switch took past its %v (a busy machine): the checks of the vLLM side are undecided this time", after)
	} else {
		if _, ok := m["sglang:num_requests_total"]; ok {
			t.Fatal("SGLang's names before the switch")
		}
		if v := value(t, m, "vllm:request_success_total"); v != 1 {
			t.Errorf("vllm:request_success_total %v before the switch, want 1", v)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, ok := e.DialectSwitchedAt(); !ok && time.Now().Before(deadline); _, ok = e.DialectSwitchedAt() {
		time.Sleep(10 * time.Millisecond)
	}
	at, ok := e.DialectSwitchedAt()
	if !ok || at < after {
		t.Fatalf("switched at %v (%v), want at %v or later", at, ok, after)
	}
	if rs := readRaw(t, ep.BaseURL, "after", nil); !rs.done {
		t.Fatal("request after the switch failed")
	}
	m = scrape(t, ep.MetricsURL)
	if _, ok := m["vllm:request_success_total"]; ok {
		t.Error("vLLM's names after the switch")
	}
	// 1000 prior + the request after; + the one before, too, when the
	// switch came before it finished (early).
	if v := value(t, m, "sglang:num_requests_total"); v != 1001 && !(early && v == 1002) {
		t.Errorf("sglang:num_requests_total %v after the switch, want 1000 prior + 1", v)
	}
	if err := (Faults{DialectSwitchAfter: time.Second, DialectSwitchTo: "nonesuch"}).Validate(); err == nil {
		t.Error("an unknown dialect_switch_to validated")
	}
}

// TestRestartAtFinished: Faults.RestartAtFinished restarts the engine at the
// first /metrics read after its second finished request, and that read gets
// the old process's final counts; a request that came in between is held,
// then cut by the restart; the next read counts from zero. Nothing here
// depends on when anything runs: each step waits for the one before.
func TestRestartAtFinished(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Faults: Faults{RestartAtFinished: 2}})
	for _, id := range []string{"a", "b"} {
		if rs := readRaw(t, ep.BaseURL, id, nil); !rs.done {
			t.Fatalf("%s failed", id)
		}
	}
	if !e.restartHeld.Load() || e.Restarts() != 0 {
		t.Fatalf("after 2 finished: holding %v, %d restarts", e.restartHeld.Load(), e.Restarts())
	}
	got := make(chan rawStream)
	go func() { got <- readRaw(t, ep.BaseURL, "held", nil) }()
	// Wait (bounded) for the held request to reach the engine's inbox.
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.inMu.Lock()
		n := len(e.inbox)
		e.inMu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the held request never reached the engine")
		}
		runtime.Gosched()
	}
	if v := value(t, scrape(t, ep.MetricsURL), "sglang:num_requests_total"); v != 2 {
		t.Errorf("the read that restarts: num_requests_total %v, want the old process's 2", v)
	}
	if e.Restarts() != 1 {
		t.Fatalf("%d restarts after the read", e.Restarts())
	}
	if rs := <-got; rs.done {
		t.Error("the held request survived the restart")
	}
	if v := value(t, scrape(t, ep.MetricsURL), "sglang:num_requests_total"); v != 0 {
		t.Errorf("after the restart: num_requests_total %v, want 0", v)
	}
	for _, id := range []string{"c", "d", "e"} {
		if rs := readRaw(t, ep.BaseURL, id, nil); !rs.done {
			t.Fatalf("%s after the restart failed", id)
		}
	}
	if v := value(t, scrape(t, ep.MetricsURL), "sglang:num_requests_total"); v != 3 || e.Restarts() != 1 {
		t.Errorf("num_requests_total %v, %d restarts: want 3 and the one restart", v, e.Restarts())
	}
	if tr := truthOf(t, e, "held"); tr.Outcome == OutcomeOK {
		t.Errorf("truth of the held request = %+v", tr)
	}
}
