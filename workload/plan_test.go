package workload

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/scenarios"
)

// scenario parses an inline scenario for a test.
func scenario(t *testing.T, src string) scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("testdata/inline.yaml", []byte(src)) // data files resolve in testdata/
	if err != nil {
		t.Fatalf("scenario:\n%v", err)
	}
	return s
}

func plan(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := NewPlan(scenario(t, src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const uniformScenario = `
name: lengths
seed: 9
engine: {kind: sim}
workload:
  concurrency: 2
  requests: 10
  prompt_tokens: {dist: uniform, min: 5, max: 300}
  output_tokens: {dist: uniform, min: 1, max: 64}
`

func TestRequestsAreDeterministic(t *testing.T) {
	t.Parallel()
	a, b := plan(t, uniformScenario), plan(t, uniformScenario)
	for _, i := range []int{0, 1, 2, 500, 99999} {
		if diff := cmp.Diff(a.Request(i), b.Request(i)); diff != "" {
			t.Errorf("request %d differs between two plans of one scenario (-a +b):\n%s", i, diff)
		}
	}
	// Asking in another order changes nothing.
	later := a.Request(500)
	_ = a.Request(3)
	if diff := cmp.Diff(later, a.Request(500)); diff != "" {
		t.Errorf("request 500 changed after asking for request 3:\n%s", diff)
	}
}

func TestRequestsHitTheirTokenTargets(t *testing.T) {
	t.Parallel()
	p := plan(t, uniformScenario)
	ids := map[string]bool{}
	prompts := map[string]bool{}
	safe := regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	for i := range 2000 {
		r := p.Request(i)
		if r.Index != i {
			t.Fatalf("request %d has index %d", i, r.Index)
		}
		if got := CountTokens(r.Messages); got != r.PromptTokens {
			t.Fatalf("request %d: %d words in the prompt, target %d", i, got, r.PromptTokens)
		}
		if r.PromptTokens < 5 || r.PromptTokens > 300 || r.MaxTokens < 1 || r.MaxTokens > 64 {
			t.Fatalf("request %d: prompt %d, output %d outside the scenario's ranges", i, r.PromptTokens, r.MaxTokens)
		}
		if !r.IgnoreEOS {
			t.Fatalf("request %d: ignore_eos is off by default", i)
		}
		if !safe.MatchString(r.ID) || ids[r.ID] {
			t.Fatalf("request %d: id %q is not unique and header-safe", i, r.ID)
		}
		ids[r.ID] = true
		prompts[r.Messages[0].Content] = true
		if b, err := json.Marshal(r.ID); err != nil || string(b) != `"`+r.ID+`"` {
			t.Fatalf("request %d: id %q needs escaping in JSON", i, r.ID)
		}
	}
	if len(prompts) < 1990 {
		t.Errorf("only %d distinct prompts in 2000 requests", len(prompts))
	}
}

func TestUniformLengthsCoverTheRange(t *testing.T) {
	t.Parallel()
	p := plan(t, uniformScenario)
	seen := map[int]int{}
	for i := range 20000 {
		seen[p.Request(i).MaxTokens]++
	}
	for v := 1; v <= 64; v++ {
		// Each of the 64 values expects 312.5 draws; 200 is more than 6 standard deviations below.
		if seen[v] < 200 {
			t.Errorf("output length %d drawn %d times in 20000, want about 312", v, seen[v])
		}
	}
}

func TestPlanPhases(t *testing.T) {
	t.Parallel()
	p := plan(t, "name: open\nseed: 3\nengine: {kind: sim}\nworkload: {rate: 8, arrival: constant, duration: 10s}\n")
	phases := p.Phases()
	if len(phases) != 1 || phases[0].Name != "main" || !phases[0].Measured || !phases[0].Open() || phases[0].Rate != 8 {
		t.Fatalf("phases = %+v", phases)
	}
	if off, _ := phases[0].Pacer.Offset(4); off.Milliseconds() != 500 {
		t.Errorf("constant 8/s: arrival 4 at %v, want 500ms", off)
	}
}
