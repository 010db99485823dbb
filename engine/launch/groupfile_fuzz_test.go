package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reaper reads any engine.pgid without panicking (the runs directory
// is shared, and a file there may be anything): it fails naming the file,
// or gives a group id above 1 — never init's group, never "every process".
func FuzzReadGroupFile(f *testing.F) {
	for _, s := range []string{
		"4242\nboot_id 0b3c\nstart 123\ncommand vllm\nowner 77 99\n", // the shape writeGroupFile writes
		"4242\n", "1\n", "-1\n", "0\n", "", "\n\n", "99999999999999999999\n", "4242\nowner x y\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), GroupFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := readGroupFile(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		if l.pgid <= 1 {
			t.Fatalf("group %d read from %q", l.pgid, data)
		}
	})
}
