package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTrials(t *testing.T) {
	set := t.TempDir()
	for _, name := range []string{"trial-1", "trial-2"} {
		if err := os.MkdirAll(filepath.Join(set, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(set, name, RunFile), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteTrials(set, []string{"trial-2", "trial-1"}); err != nil {
		t.Fatal(err)
	}
	got, err := Trials(set)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(set, "trial-2"), filepath.Join(set, "trial-1")}; !slices.Equal(got, want) {
		t.Errorf("Trials = %v, want %v (the order they ran)", got, want)
	}
	single := filepath.Join(set, "trial-1")
	if got, err := Trials(single); err != nil || !slices.Equal(got, []string{single}) {
		t.Errorf("Trials(a run) = %v, %v; want the run itself", got, err)
	}
}

func TestTrialsRejects(t *testing.T) {
	for _, tc := range []struct{ name, index, want string }{
		{"outside", `{"trials": ["../elsewhere"]}`, "not a directory inside"},
		{"absolute", `{"trials": ["/tmp"]}`, "not a directory inside"},
		{"missing", `{"trials": ["trial-9"]}`, "not a run directory"},
		{"empty", `{"trials": []}`, "lists no trials"},
		{"garbage", `{"trials": `, TrialsFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := t.TempDir()
			if err := os.WriteFile(filepath.Join(set, TrialsFile), []byte(tc.index), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Trials(set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Trials = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if err := WriteTrials(t.TempDir(), []string{"../x"}); err == nil {
		t.Error("WriteTrials accepted a trial outside the set")
	}
}
