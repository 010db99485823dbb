package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestDockerfileBuildStep runs the Dockerfile's build command as the image
// build would (no Docker daemon is needed, nor available here): the
// command text is taken from the Dockerfile itself, so renaming the version
// variable or the package, or a dependency that needs cgo, fails here
// instead of in a user's `docker build`. The final stage is distroless
// static (no libc), so the binary must be static too.
func TestDockerfileBuildStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds llmbench")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux")
	}
	dockerfile, err := os.ReadFile(filepath.Join(kubernetesDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, then find the RUN that builds the binary.
	text := strings.ReplaceAll(string(dockerfile), "\\\n", " ")
	m := regexp.MustCompile(`(?m)^RUN (.*go build .*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("Dockerfile: no RUN line with go build")
	}
	if !strings.Contains(text, "COPY --from=build /out/llmbench ") {
		t.Fatal("Dockerfile: the final stage does not copy /out/llmbench, which this test builds")
	}
	out := t.TempDir()
	const version = "v0.0.0-dockerfile-test"
	cmdline := strings.ReplaceAll(m[1], "${VERSION}", version)
	cmdline = strings.ReplaceAll(cmdline, "/out/", out+"/")
	// -trimpath would rebuild every package here (it changes each one's
	// build ID, minutes on a cold CI machine) and cannot decide whether
	// the build succeeds or links statically.
	cmdline = strings.Replace(cmdline, " -trimpath", "", 1)
	build := exec.Command("sh", "-c", cmdline)
	build.Dir = "../.." // the build context is the repository's root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	bin := filepath.Join(out, "llmbench")
	got, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(got), version) {
		t.Errorf("%s --version = %q (%v), want it to name %s", bin, got, err, version)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary is dynamically linked: it cannot run on distroless/static")
		}
	}
}
