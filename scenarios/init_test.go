package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitGoldens: each engine's scenario is its golden, byte for byte,
// and loads as a file with the engine it names.
func TestInitGoldens(t *testing.T) {
	for _, kind := range InitKinds {
		t.Run(kind, func(t *testing.T) {
			data, err := Init(InitOptions{Engine: kind})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "init-"+kind+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != string(want) {
				t.Errorf("init --engine %s differs from %s (go test ./scenarios -run TestInitGoldens -update)\n%s", kind, golden, data)
			}
			path := filepath.Join(t.TempDir(), "s.yaml")
			if err := WriteInit(path, data, false); err != nil {
				t.Fatal(err)
			}
			sc, err := LoadEnv(path, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatalf("init --engine %s does not load: %v", kind, err)
			}
			wantKind, launched := kind, kind != KindSim && kind != KindExternal
			if launched {
				wantKind = KindLaunch
			}
			if sc.Engine.Kind != wantKind || (launched && sc.Engine.Launch.Kind != kind) {
				t.Errorf("engine = %+v, want kind %s", sc.Engine, kind)
			}
			if sc.Workload.Concurrency != 8 || sc.Workload.Duration.String() != "30s" {
				t.Errorf("workload = %+v", sc.Workload.LoadSpec)
			}
			for _, line := range strings.Split(string(data), "\n") {
				if len(line) > 110 {
					t.Errorf("line wider than 110 columns: %q", line)
				}
			}
		})
	}
}

func TestInitURLAndRefusals(t *testing.T) {
	data, err := Init(InitOptions{Engine: KindExternal, URL: "http://gpu:9000"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse(filepath.Join(t.TempDir(), "x.yaml"), data)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ENGINE_URL") == "" && sc.Engine.BaseURL != "http://gpu:9000/v1" {
		t.Errorf("base_url = %q, want http://gpu:9000/v1", sc.Engine.BaseURL)
	}
	for _, o := range []InitOptions{{Engine: "tgi2"}, {Engine: KindSim, URL: "http://x"}, {Engine: "vllm", URL: "http://x"}} {
		if _, err := Init(o); err == nil {
			t.Errorf("Init(%+v) accepted", o)
		}
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteInit(path, data, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("overwrite without force: err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "mine\n" {
		t.Errorf("file changed without --force: %q", got)
	}
	if err := WriteInit(path, data, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(data) {
		t.Error("--force did not replace the file")
	}
}
