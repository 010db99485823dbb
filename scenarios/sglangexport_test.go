package scenarios

import (
	"strings"
	"testing"
)

func TestSGLangExportYAML(t *testing.T) {
	t.Parallel()
	const load = "workload: {concurrency: 1, duration: 1s}\n"
	s, err := parseIn("f.yaml", []byte(head+load+"scrape: {sglang_export: {}}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Scrape.SGLangExport == nil || s.Scrape.SGLangExport.Dir != "" {
		t.Errorf("sglang_export: %+v", s.Scrape.SGLangExport)
	}
	if s, _ := parseIn("f.yaml", []byte(head+load), noEnv); s.Scrape.SGLangExport != nil {
		t.Error("an export without scrape.sglang_export")
	}
	// withEngine is a scenario of the engine yaml names (else head's).
	withEngine := func(yaml string) string {
		if strings.HasPrefix(yaml, "engine:") {
			return "name: x\n" + load + yaml
		}
		return head + load + yaml
	}
	for yaml, want := range map[string]string{
		"scrape: {sglang_export: {dir: logs}}\n":                                                      "scrape.sglang_export.dir: want an absolute path",
		"scrape: {sglang_export: {path: /x}}\n":                                                       "scrape.sglang_export.path: unknown field",
		"engine: {kind: sim, dialect: vllm}\nscrape: {sglang_export: {}}\n":                           "scrape.sglang_export: the built-in engine writes SGLang's export in dialect sglang only",
		"engine: {kind: external, base_url: 'http://127.0.0.1:30000'}\nscrape: {sglang_export: {}}\n": "scrape.sglang_export.dir: required for an external engine",
		"engine: {kind: launch, launch: {kind: vllm, model: m}}\nscrape: {sglang_export: {}}\n":       "a launched vllm writes no SGLang export",
	} {
		_, err := parseIn("f.yaml", []byte(withEngine(yaml)), noEnv)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
	for _, yaml := range []string{
		"engine: {kind: external, base_url: 'http://127.0.0.1:30000'}\nscrape: {sglang_export: {dir: /var/log/sglang}}\n",
		"engine: {kind: launch, launch: {kind: sglang, model: m}}\nscrape: {sglang_export: {}}\n",
	} {
		if _, err := parseIn("f.yaml", []byte(withEngine(yaml)), noEnv); err != nil {
			t.Errorf("%s: %v", yaml, err)
		}
	}
}
