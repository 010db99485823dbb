package workload

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// encodePlan is what `llmbench plan` shows of a plan: its summary and first requests.
func encodePlan(t *testing.T, p *Plan) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		Summary  PlanSummary
		Requests []Request
	}{p.Summary(), p.Preview(50)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlanDeterminism builds every example's plan twice and requires the
// two to be byte-identical, and a different seed to change them.
func TestPlanDeterminism(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(scenarios.Examples(), "*.yaml")
	if err != nil || len(names) < 7 {
		t.Fatalf("examples: %v, %v", names, err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			build := func(seed int64) []byte {
				s, err := scenarios.LoadFS(scenarios.Examples(), name)
				if err != nil {
					t.Fatal(err)
				}
				if seed != 0 {
					s.Seed = seed
				}
				p, err := NewPlan(s)
				if err != nil {
					t.Fatal(err)
				}
				return encodePlan(t, p)
			}
			a, b := build(0), build(0)
			if !bytes.Equal(a, b) {
				t.Errorf("two plans of %s differ:\n%s\n%s", name, a, b)
			}
			if bytes.Equal(a, build(987654321)) {
				t.Errorf("another seed gave the same plan of %s", name)
			}
		})
	}
}

func TestExamplePlans(t *testing.T) {
	t.Parallel()
	load := func(name string) *Plan {
		s, err := scenarios.LoadFS(scenarios.Examples(), name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("quickstart", func(t *testing.T) {
		sum := load("quickstart.yaml").Summary()
		if len(sum.Phases) != 1 || sum.Phases[0].Load != "closed loop, 16 users" || sum.Phases[0].Duration != 20*time.Second {
			t.Errorf("summary %+v", sum)
		}
	})
	t.Run("poisson-ramp", func(t *testing.T) {
		p := load("poisson-ramp.yaml")
		sum := p.Summary()
		if len(sum.Phases) != 2 || sum.Phases[0].Name != "warmup" || sum.Phases[0].Arrivals != 10 {
			t.Fatalf("phases %+v", sum.Phases)
		}
		// Λ over the ramp: 10 s × 10/s + 20 s × 20/s + 10 s × 30/s = 800.
		main := sum.Phases[1]
		if math.Abs(float64(main.Arrivals)-800) > 4*math.Sqrt(800) || main.Duration != 40*time.Second || main.Cap != "256 in flight, then drop" {
			t.Errorf("main phase %+v", main)
		}
	})
	t.Run("sweep", func(t *testing.T) {
		sum := load("sweep.yaml").Summary()
		var names []string
		for _, ph := range sum.Phases {
			names = append(names, ph.Name)
		}
		want := []string{"warmup", "rate-2", "rate-4", "rate-8", "rate-12", "rate-16", "rate-24", "rate-32"}
		if len(names) != len(want) {
			t.Fatalf("phases %v, want %v", names, want)
		}
		for i := range want {
			if names[i] != want[i] || (i > 0 && !sum.Phases[i].Measured) {
				t.Errorf("phase %d: %s (measured %v), want %s", i, names[i], sum.Phases[i].Measured, want[i])
			}
		}
	})
	t.Run("shared-prefix", func(t *testing.T) {
		p := load("shared-prefix.yaml")
		a, b := p.Request(0), p.Request(8) // same group (8 groups)
		if a.Messages[0].Content != b.Messages[0].Content || a.PromptTokens != CountTokens(a.Messages) {
			t.Error("requests 0 and 8 should share group 0's prefix")
		}
	})
	t.Run("multi-turn", func(t *testing.T) {
		p := load("multi-turn.yaml")
		if p.Turns() != 5 || len(p.Request(4).Messages) != 1+2*4+1 {
			t.Errorf("turns %d, messages of turn 5: %d", p.Turns(), len(p.Request(4).Messages))
		}
	})
	t.Run("trace-replay", func(t *testing.T) {
		sum := load("trace-replay.yaml").Summary()
		if ph := sum.Phases[0]; ph.Arrivals != 40 || ph.Load != "open loop, trace replay" {
			t.Errorf("trace phase %+v", ph)
		}
	})
	t.Run("ci-gate", func(t *testing.T) {
		sum := load("ci-gate.yaml").Summary()
		if len(sum.Phases) != 2 || sum.Phases[0].Requests != 16 || sum.Phases[1].Requests != 400 {
			t.Errorf("phases %+v", sum.Phases)
		}
	})
}

func TestPreviewIntendedOffsets(t *testing.T) {
	t.Parallel()
	p := plan(t, "name: pv\nengine: {kind: sim}\nworkload: {rate: 4, arrival: constant, requests: 8}\n")
	for i, r := range p.Preview(5) {
		if r.Phase != "main" || r.Intended != time.Duration(i)*250*time.Millisecond {
			t.Errorf("preview %d: phase %q, intended %v", i, r.Phase, r.Intended)
		}
	}
}
