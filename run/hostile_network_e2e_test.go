package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestHostileNetworkExample runs scenarios/hostile-network.yaml as a user
// would and checks what it promises: the engine's refusing restarts are
// outage windows with few attempts each (users back off), the gzip a proxy
// added is decoded and noted on every good record, and the engine's
// impossible usage claims are flagged, counted and never used.
func TestHostileNetworkExample(t *testing.T) {
	t.Parallel()
	path := filepath.Join(testkit.ExampleFiles(t), "hostile-network.yaml")
	res, err := Run(context.Background(), Config{Scenario: path, RunsDir: t.TempDir(),
		Sets: []string{"workload.duration=9s"}}, IO{Stdout: &syncBuffer{}, Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	records := readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))

	// Restarts at 4 s and 8 s, each 300 ms down: two outages, the second
	// may fall after the last arrival when the machine is slow.
	o := sum.Outages
	if o == nil || o.Count < 1 || o.Count > 2 {
		t.Fatalf("outages %+v, want 1 or 2 (the engine refused connections at 4 s and 8 s)", o)
	}
	for _, w := range o.Windows {
		// Four users backing off from 50 ms (doubling) meet a 300 ms
		// downtime at most 4 or 5 times each; retrying at once makes hundreds.
		if w.Attempts < 1 || w.Attempts > 4*6 {
			t.Errorf("outage at %.2f s: %d failed attempts, want 1..24 for 4 users backing off", w.Start, w.Attempts)
		}
		if w.Length < 0.1 || w.Length > 2 {
			t.Errorf("outage at %.2f s lasted %.3f s, want about the 300 ms downtime plus a back-off", w.Start, w.Length)
		}
	}

	flagged, ok := 0, 0
	for _, r := range records {
		if !r.OK() {
			continue
		}
		ok++
		if !strings.Contains(r.Wire, "gzip") {
			t.Errorf("request %s: wire %q, want the proxy's gzip noted", r.ID, r.Wire)
		}
		if r.HasViolation(client.ViolationUsageBeyondCap) {
			flagged++
			if r.TokenSource != client.TokensFromChunks || r.OutputTokens > r.MaxTokens || r.OutputTokens <= 0 {
				t.Errorf("request %s claimed 10^18 tokens: %d output tokens from %q, want the chunks' count within max_tokens %d",
					r.ID, r.OutputTokens, r.TokenSource, r.MaxTokens)
			}
		} else if r.OutputTokens != r.MaxTokens {
			t.Errorf("request %s: %d output tokens, want max_tokens %d (ignore_eos)", r.ID, r.OutputTokens, r.MaxTokens)
		}
	}
	if got := sum.Health.Wire["gzip"]; got < ok {
		t.Errorf("the summary counts %d gzipped responses, want every one of the %d good ones", got, ok)
	}
	if got := sum.Health.ProtocolViolations[string(client.ViolationUsageBeyondCap)]; flagged == 0 || got != flagged {
		t.Errorf("summary counts %d usage_beyond_cap, the records %d (want some: 5%% of requests claim 10^18)", got, flagged)
	}
}
