package report

import (
	"path/filepath"
	"testing"
	"time"
)

func TestNewRecorderNeverReusesADirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs", "20260101T000000Z-x")
	seen := map[string]bool{}
	for range 3 {
		r, err := NewRecorder(dir, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.Dir()] {
			t.Fatalf("run directory %s handed out twice", r.Dir())
		}
		seen[r.Dir()] = true
		r.Close()
	}
	if !seen[dir] || !seen[dir+"-2"] || !seen[dir+"-3"] {
		t.Errorf("directories %v, want %s, -2 and -3", seen, dir)
	}
}
