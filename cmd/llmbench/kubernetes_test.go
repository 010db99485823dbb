package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/llmbench-org/llmbench/scenarios"
)

const kubernetesDir = "../../deploy/kubernetes"

// kubernetesObjects decodes every YAML document of every manifest in
// deploy/kubernetes into its Kubernetes API type, strictly: a misspelt
// (even in case only) or misplaced field, a duplicate key or a kind the test
// does not know fails.
func kubernetesObjects(t *testing.T) (jobs map[string]*batchv1.Job, configMaps map[string]*corev1.ConfigMap, pvcs map[string]*corev1.PersistentVolumeClaim, pods map[string]*corev1.Pod) {
	t.Helper()
	jobs, configMaps = map[string]*batchv1.Job{}, map[string]*corev1.ConfigMap{}
	pvcs, pods = map[string]*corev1.PersistentVolumeClaim{}, map[string]*corev1.Pod{}
	files, err := filepath.Glob(filepath.Join(kubernetesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", kubernetesDir, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")) == "" {
				continue
			}
			where := fmt.Sprintf("%s, document %d", filepath.Base(file), i+1)
			j, err := yaml.YAMLToJSONStrict([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var kind struct{ APIVersion, Kind string }
			if err := json.Unmarshal(j, &kind); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var obj interface{ GetName() string }
			switch kind.APIVersion + " " + kind.Kind {
			case "batch/v1 Job":
				obj = &batchv1.Job{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "v1 PersistentVolumeClaim":
				obj = &corev1.PersistentVolumeClaim{}
			case "v1 Pod":
				obj = &corev1.Pod{}
			default:
				t.Fatalf("%s: kind %q of %q: not one the test decodes", where, kind.Kind, kind.APIVersion)
			}
			if err := decodeStrict(j, obj); err != nil {
				t.Fatalf("%s (%s): %v", where, kind.Kind, err)
			}
			if obj.GetName() == "" {
				t.Fatalf("%s: %s without a name", where, kind.Kind)
			}
			switch o := obj.(type) {
			case *batchv1.Job:
				jobs[o.Name] = o
			case *corev1.ConfigMap:
				configMaps[o.Name] = o
			case *corev1.PersistentVolumeClaim:
				pvcs[o.Name] = o
			case *corev1.Pod:
				pods[o.Name] = o
			}
		}
	}
	return jobs, configMaps, pvcs, pods
}

// A misspelt field is caught, so the test above is one that can fail.
func TestKubernetesDecodingIsStrict(t *testing.T) {
	t.Parallel()
	j, err := yaml.YAMLToJSONStrict([]byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completionsMode: Indexed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(j, &batchv1.Job{}); err == nil {
		t.Error("completionsMode (for completionMode) decoded without an error")
	}
	// encoding/json matches field names whatever their case; the API
	// server does not, and neither does the test.
	j, err = yaml.YAMLToJSONStrict([]byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completionmode: Indexed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(j, &batchv1.Job{}); err == nil {
		t.Error("completionmode (for completionMode) decoded without an error")
	}
}

// decodeStrict decodes JSON into a Kubernetes object as the API server does
// (sigs.k8s.io/json, case-sensitive) and fails on what the server's strict
// field validation would reject: unknown and duplicate fields.
func decodeStrict(j []byte, obj any) error {
	strict, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// envOf is a container's environment: literal values, and for a variable
// from the downward API its field path.
func envOf(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			env[e.Name] = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
		default:
			env[e.Name] = e.Value
		}
	}
	return env
}

var kubeVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) as the kubelet does in a container's args, with
// values; a variable the container does not define is a failure (the kubelet
// would pass "$(VAR)" on as it is).
func expand(t *testing.T, where string, args []string, env map[string]string, values map[string]string) []string {
	t.Helper()
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = kubeVarRef.ReplaceAllStringFunc(a, func(ref string) string {
			name := kubeVarRef.FindStringSubmatch(ref)[1]
			if _, ok := env[name]; !ok {
				t.Errorf("%s: %s is not in the container's env, so the kubelet leaves it as it is", where, ref)
			}
			v, ok := values[name]
			if !ok {
				v = env[name]
			}
			return v
		})
	}
	return out
}

// mountOf is where the container mounts the pod's volume that holds what
// is asked for (a ConfigMap or a claim), checking the mount names a volume.
func mountOf(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container, match func(corev1.Volume) bool) string {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	found := ""
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("%s: mount %s names no volume of the pod", where, m.Name)
			continue
		}
		if match(v) {
			found = m.MountPath
		}
	}
	if found == "" {
		t.Fatalf("%s: no mount of the volume wanted", where)
	}
	return found
}

// parsesAsLlmbench checks that args is a command line llmbench accepts:
// the command exists and its flags parse.
func parsesAsLlmbench(t *testing.T, where string, args []string) {
	t.Helper()
	root := newRootCmd(&cliIO{})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Errorf("%s: %q: no such command (%v)", where, args, err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %q: %v", where, args, err)
		return
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			t.Errorf("%s: %q: %v", where, args, err)
		}
	}
}

// flagValue is the value of flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// The Kubernetes manifests are valid objects of their kinds, and wired
// together: the completion index reaches --shard, N agrees everywhere, the
// start time reaches --start-at, shards write where the merge reads, both
// Jobs run the image's llmbench, and every llmbench command line parses.
func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	jobs, configMaps, pvcs, pods := kubernetesObjects(t)
	shards, merge := jobs["llmbench-shards"], jobs["llmbench-merge"]
	if shards == nil || merge == nil {
		t.Fatalf("jobs %v: want llmbench-shards and llmbench-merge", slices.Collect(maps.Keys(jobs)))
	}

	// The Indexed Job: N pods at once, not retried (a retry would start
	// late), each told its index.
	sp := shards.Spec
	if sp.CompletionMode == nil || *sp.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("shards: completionMode %v, want Indexed", sp.CompletionMode)
	}
	if sp.Completions == nil || sp.Parallelism == nil || *sp.Completions != *sp.Parallelism || *sp.Completions < 2 {
		t.Fatalf("shards: completions %v, parallelism %v: want the same N ≥ 2, every shard at once", sp.Completions, sp.Parallelism)
	}
	if sp.BackoffLimit == nil || *sp.BackoffLimit != 0 {
		t.Errorf("shards: backoffLimit %v, want 0: a shard started again misses the start time", sp.BackoffLimit)
	}
	if sp.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("shards: restartPolicy %q, want Never", sp.Template.Spec.RestartPolicy)
	}
	if len(sp.Template.Spec.Containers) != 1 {
		t.Fatalf("shards: %d containers, want llmbench alone", len(sp.Template.Spec.Containers))
	}
	sc := sp.Template.Spec.Containers[0]
	senv := envOf(sc)
	if got := senv["JOB_COMPLETION_INDEX"]; got != "fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("shards: JOB_COMPLETION_INDEX is %q, want the Job's completion-index annotation", got)
	}
	if want := fmt.Sprint(*sp.Completions); senv["SHARDS"] != want {
		t.Errorf("shards: SHARDS %q, completions %s: they must agree", senv["SHARDS"], want)
	}
	if _, ok := senv["START_AT"]; !ok {
		t.Error("shards: no START_AT in the environment")
	}
	n := int(*sp.Completions)
	var shardRuns []string
	for i := range n {
		values := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i), "START_AT": "2026-12-02T10:00:00Z"}
		args := expand(t, "shards", sc.Args, senv, values)
		if args[0] != "run" {
			t.Fatalf("shards: args %q, want llmbench run", args)
		}
		if got, want := flagValue(args, "--shard"), fmt.Sprintf("%d/%d", i, n); got != want {
			t.Errorf("shard %d: --shard %q, want %q", i, got, want)
		}
		if got := flagValue(args, "--start-at"); got != values["START_AT"] {
			t.Errorf("shard %d: --start-at %q, want $(START_AT)", i, got)
		}
		parsesAsLlmbench(t, fmt.Sprintf("shard %d", i), args)
		shardRuns = append(shardRuns, flagValue(args, "--runs"))
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(shardRuns))); len(distinct) != n {
		t.Errorf("shards write to %q: want a directory of each shard's own", shardRuns)
	}

	// The scenario comes from the ConfigMap, and loads.
	scenarioPath := sc.Args[1]
	scMount := mountOf(t, "shards", sp.Template.Spec, sc, func(v corev1.Volume) bool { return v.ConfigMap != nil })
	var cm *corev1.ConfigMap
	for _, v := range sp.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			cm = configMaps[v.ConfigMap.Name]
		}
	}
	if cm == nil {
		t.Fatal("shards: the scenario volume names no ConfigMap of the manifests")
	}
	key, ok := strings.CutPrefix(scenarioPath, scMount+"/")
	if !ok || cm.Data[key] == "" {
		t.Fatalf("shards: scenario %s is not a key of ConfigMap %s mounted at %s", scenarioPath, cm.Name, scMount)
	}
	file := filepath.Join(t.TempDir(), key)
	if err := os.WriteFile(file, []byte(cm.Data[key]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.Load(file); err != nil {
		t.Errorf("the ConfigMap's scenario: %v", err)
	}

	// Results: shards write to the claim, under the directory the merge
	// reads, and the claim allows several writers.
	claimOf := func(spec corev1.PodSpec) string {
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
		return ""
	}
	claim := claimOf(sp.Template.Spec)
	pvc := pvcs[claim]
	if pvc == nil {
		t.Fatalf("shards: claim %q is not among the manifests' (%v)", claim, slices.Collect(maps.Keys(pvcs)))
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("claim %s: access modes %v: shards on several nodes write at once (ReadWriteMany)", claim, pvc.Spec.AccessModes)
	}
	resultsMount := mountOf(t, "shards", sp.Template.Spec, sc, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil })

	mp := merge.Spec.Template.Spec
	if len(mp.Containers) != 1 || mp.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("merge: %d containers, restartPolicy %q: want one, Never", len(mp.Containers), mp.RestartPolicy)
	}
	mc := mp.Containers[0]
	menv := envOf(mc)
	if menv["RUN"] != senv["RUN"] || senv["RUN"] == "" {
		t.Errorf("RUN: shards %q, merge %q: the merge must read the shards' run", senv["RUN"], menv["RUN"])
	}
	if got := claimOf(mp); got != claim {
		t.Errorf("merge reads claim %q, shards write %q", got, claim)
	}
	mergeMount := mountOf(t, "merge", mp, mc, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil })
	margs := expand(t, "merge", mc.Args, menv, nil)
	parsesAsLlmbench(t, "merge", margs)
	if margs[0] != "merge" || len(margs) < 3 {
		t.Fatalf("merge: args %q, want llmbench merge OUT DIR", margs)
	}
	// Each shard's run directory lies at most two levels under what merge
	// is given (llmbench merge's search depth): DIR/shard-i/RUN_ID.
	for i, runs := range shardRuns {
		onVolume, ok := strings.CutPrefix(runs, resultsMount+"/")
		if !ok {
			t.Fatalf("shard %d writes to %s, not on the results volume (%s)", i, runs, resultsMount)
		}
		from, ok := strings.CutPrefix(margs[2], mergeMount+"/")
		if !ok || filepath.Dir(onVolume) != from {
			t.Errorf("shard %d writes its runs to %s; merge reads %s: want the shard's --runs directly under it", i, runs, margs[2])
		}
	}
	if !strings.HasPrefix(margs[1], mergeMount+"/") {
		t.Errorf("merge writes %s, not on the results volume", margs[1])
	}

	// Both Jobs run the one image's llmbench, as the Dockerfile installs it.
	dockerfile, err := os.ReadFile(filepath.Join(kubernetesDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]`).FindSubmatch(dockerfile)
	if entry == nil {
		t.Fatal("Dockerfile: no ENTRYPOINT")
	}
	if !bytes.Contains(dockerfile, []byte("./cmd/llmbench")) {
		t.Error("Dockerfile does not build ./cmd/llmbench")
	}
	for name, c := range map[string]corev1.Container{"shards": sc, "merge": mc} {
		if len(c.Command) != 1 || c.Command[0] != string(entry[1]) {
			t.Errorf("%s: command %q, want the image's %s", name, c.Command, entry[1])
		}
		if c.Image != sc.Image {
			t.Errorf("%s: image %s, shards' %s: want one image", name, c.Image, sc.Image)
		}
	}
	if f := pods["llmbench-fetch"]; f == nil || claimOf(f.Spec) != claim {
		t.Error("the fetch pod does not mount the results claim")
	}

	// The README's commands substitute what the manifests hold.
	readme, err := os.ReadFile(filepath.Join(kubernetesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"image: " + sc.Image, "value: " + senv["START_AT"], "job/" + shards.Name, "job/" + merge.Name, "pod/llmbench-fetch"} {
		if !bytes.Contains(readme, []byte(s)) {
			t.Errorf("README.md never mentions %q, which the manifests hold", s)
		}
	}
}
