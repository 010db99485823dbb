package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/llmbench-org/llmbench/report/reconcile"
)

// foreign is what the watching llmbench run's reconciliation said about
// the traffic it did not send: the tool's, while it ran.
type foreign struct {
	Severity string `json:"severity"`
	Verdict  string `json:"verdict"`
	// Requests is the count the finding gives (foreign_requests, or the
	// lower bound foreign_requests_min, or foreign_requests_estimated from
	// tokens), and Key which of them.
	Requests float64 `json:"requests"`
	Key      string  `json:"key,omitempty"`
}

// readForeign reads the foreign_traffic finding of a run's summary.json.
func readForeign(path string) (foreign, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return foreign{}, err
	}
	var s struct {
		Findings []reconcile.Finding `json:"findings"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return foreign{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, f := range s.Findings {
		if f.ID != reconcile.IDForeignTraffic {
			continue
		}
		out := foreign{Severity: string(f.Severity), Verdict: f.Verdict}
		for _, k := range []string{"foreign_requests", "foreign_requests_min", "foreign_requests_estimated"} {
			if v, ok := f.Evidence[k]; ok {
				out.Requests, out.Key = v, k
				break
			}
		}
		return out, nil
	}
	return foreign{}, fmt.Errorf("%s: no %s finding", path, reconcile.IDForeignTraffic)
}
