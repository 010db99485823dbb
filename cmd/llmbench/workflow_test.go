package main

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The GitHub Actions example parses, pins llmbench, and calls llmbench only
// with commands and flags that exist: a renamed flag fails here, not in a
// user's CI.
func TestGitHubActionsExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../deploy/github-actions/llmbench.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if v := wf.Env["LLMBENCH_VERSION"]; v == "" || v == "latest" {
		t.Errorf("LLMBENCH_VERSION %q: pin a version", v)
	}
	calls := 0
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			for _, line := range strings.Split(st.Run, "\n") {
				fields := strings.Fields(line)
				if len(fields) < 2 || fields[0] != "llmbench" {
					continue
				}
				calls++
				args := fields[1:]
				for i, a := range args {
					args[i] = strings.Trim(a, `"`)
				}
				root := newRootCmd(&cliIO{})
				cmd, rest, err := root.Find(args)
				if err != nil || cmd == root {
					t.Errorf("%q: no such command (%v)", line, err)
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Errorf("%q: %v", line, err)
				}
			}
		}
	}
	if calls == 0 {
		t.Error("the workflow runs no llmbench command")
	}
}
