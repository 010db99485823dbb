package latencytable

import "testing"

func TestName(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{"ttft": "TTFT", "ttfc": "TTFC", "itl": "ITL", "tpot": "TPOT", "e2e": "E2E", "queue": "queue", "": ""} {
		if got := Name(key); got != want {
			t.Errorf("Name(%q) = %q, want %q", key, got, want)
		}
	}
}
