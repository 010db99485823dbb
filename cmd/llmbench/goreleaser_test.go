package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/internal/realtest"
)

// goreleaserVersion is the GoReleaser the release configuration is
// checked with (.ci/run installs it).
const goreleaserVersion = "v2.17.0"

// TestGoReleaserConfig: the release builds cover linux, darwin and windows
// on amd64 and arm64, build this command, and stamp the version into the
// variable internal/version reads, as a build with the same -X proves.
func TestGoReleaserConfig(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Env     []string `yaml:"env"`
			GOOS    []string `yaml:"goos"`
			GOARCH  []string `yaml:"goarch"`
			LDFlags []string `yaml:"ldflags"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 1 {
		t.Fatalf("want GoReleaser v2 configuration with one build, got version %d, %d builds", cfg.Version, len(cfg.Builds))
	}
	b := cfg.Builds[0]
	if filepath.Clean(b.Main) != "cmd/llmbench" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build main %q env %v, want ./cmd/llmbench with CGO_ENABLED=0", b.Main, b.Env)
	}
	slices.Sort(b.GOOS)
	slices.Sort(b.GOARCH)
	if !slices.Equal(b.GOOS, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.GOARCH, []string{"amd64", "arm64"}) {
		t.Errorf("targets %v × %v, want darwin, linux, windows × amd64, arm64", b.GOOS, b.GOARCH)
	}
	m := regexp.MustCompile(`-X (\S+)=v\{\{\s*\.Version\s*\}\}`).FindStringSubmatch(strings.Join(b.LDFlags, " "))
	if m == nil {
		t.Fatalf("ldflags %q: no -X …=v{{.Version}}", b.LDFlags)
	}
	if testing.Short() {
		return
	}
	const version = "v9.9.9-goreleaser-test"
	bin := filepath.Join(t.TempDir(), "llmbench")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X "+m[1]+"="+version, "./cmd/llmbench")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build.Args, err, out)
	}
	if got, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(got), version) {
		t.Errorf("llmbench version = %q (%v): the ldflags' -X %s does not set the version", got, err, m[1])
	}
}

// TestGoReleaserCheck runs `goreleaser check` on the configuration: what
// GoReleaser itself accepts.
func TestGoReleaserCheck(t *testing.T) {
	bin := realtest.Require(t, "goreleaser", "go install github.com/goreleaser/goreleaser/v2@"+goreleaserVersion)
	check := exec.Command(bin, "check")
	check.Dir = "../.."
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}
