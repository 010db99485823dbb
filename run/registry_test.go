package run

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmbench-org/llmbench/calibrate"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
)

// fakeFamily is the engine family the registry tests add.
const fakeFamily = "fakeengine"

// fakeTTFTSpan marks the fake family's reconciliation facts in verdicts.
const fakeTTFTSpan = "the fake engine's own receipt to its first token"

// fakeDialect is the fake family's dialect file: the engine it launches is
// the built-in one speaking vLLM's metrics, so it maps them as vLLM's and
// names them its own.
type fakeDialect struct{ vllm scrape.EngineDialect }

func (fakeDialect) Name() string { return fakeFamily }
func (d fakeDialect) Map(fams []*dto.MetricFamily) scrape.Snapshot {
	s := d.vllm.Map(fams)
	s.Dialect = fakeFamily
	return s
}
func (d fakeDialect) Owns(metric string) bool { return d.vllm.Owns(metric) }
func (d fakeDialect) NamePatterns() []string  { return d.vllm.NamePatterns() }

// registerFake adds the fake family (its registry entry and its dialect
// file) until the test ends. argv is its launch command.
func registerFake(t *testing.T, argv []string) {
	t.Helper()
	fam := engines.Family{
		Name:     fakeFamily,
		Display:  "FakeEngine",
		IDs:      engines.IDs{BodyField: "fake_rid", Echo: "chatcmpl-{id}: the X-Request-Id header"},
		Tokenize: []engines.TokenizeAPI{engines.TokenizeVLLM}, // its own only: no llama.cpp or TGI attempt
		Lengths:  engines.Lengths{How: "ignore_eos alone"},
		Launch:   &engines.Launch{Argv: argv, ReadyPath: "/v1/models"},
		Reconcile: engines.Reconcile{
			TTFTSpan:    fakeTTFTSpan,
			OutsideTTFT: "the fake engine's own outside",
		},
		Wire: engines.Wire{Quirks: []string{"none"}},
	}
	undo, err := engines.Register(fam)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(undo)
	vllm, err := scrape.DialectFor(engines.VLLM)
	if err != nil {
		t.Fatal(err)
	}
	undoDialect, err := scrape.RegisterDialect(fakeDialect{vllm.(scrape.EngineDialect)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(undoDialect)
}

// TestFakeEngineFamily: a family added with one registry entry and its
// dialect file is taken up by the whole pipeline: the scenario names it as
// its launch kind and dialect, launch starts it with the family's command,
// the client sends its id field, calibration tries its tokenizer API alone,
// scrape maps its metrics and reconciliation states its facts. Not
// parallel: the family is registered for this test alone.
func TestFakeEngineFamily(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{self, "serve", "--addr", "{host}:{port}", "--preset", "tiny", "--dialect", "vllm"}
	registerFake(t, argv)

	// Scenario validation: the family is a dialect and a launch kind; a
	// name nobody registered is refused, naming the fake.
	if _, err := scenarios.Parse("f.yaml", []byte("name: x\nmodel: m\nengine: {kind: external, base_url: 'http://h/v1', dialect: "+fakeFamily+"}\nworkload: {concurrency: 1, requests: 1}\n")); err != nil {
		t.Errorf("a scenario naming the fake dialect: %v", err)
	}
	_, err = scenarios.Parse("f.yaml", []byte("name: x\nmodel: m\nengine: {kind: external, base_url: 'http://h/v1', dialect: nosuch}\nworkload: {concurrency: 1, requests: 1}\n"))
	if err == nil || !strings.Contains(err.Error(), fakeFamily) {
		t.Errorf("an unknown dialect: %v, want an error naming %s among the known", err, fakeFamily)
	}
	_, err = scenarios.Parse("f.yaml", []byte("name: x\nmodel: m\nengine: {kind: external, base_url: 'http://h/v1'}\nworkload: {concurrency: 1, requests: 1}\nrequest: {extra_body: {fake_rid: 1}}\n"))
	if err == nil || !strings.Contains(err.Error(), "llmbench sets fake_rid itself") {
		t.Errorf("an extra body setting the family's id field: %v", err)
	}
	// Client ids: the family's body field carries the id on the wire.
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select { // the first request's body; a retry's is dropped
		case bodies <- b:
		default:
		}
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	cl, err := client.New(client.Config{BaseURL: srv.URL + "/v1", Model: "m", Dialect: fakeFamily})
	if err != nil {
		t.Fatal(err)
	}
	cl.Do(t.Context(), client.Request{ID: "req-7", Messages: []client.Message{{Role: "user", Content: "hi"}}, MaxTokens: 1})
	var sent map[string]any
	if err := json.Unmarshal(<-bodies, &sent); err != nil || sent["fake_rid"] != "req-7" {
		t.Errorf("the client sent %v (%v): want the family's id field fake_rid = req-7", sent, err)
	}
	// Launch: its kind, with its command.
	if !slices.Contains(launch.Kinds(), fakeFamily) {
		t.Errorf("launch kinds %v lack %s", launch.Kinds(), fakeFamily)
	}

	dir := runQuick(t, `
name: fake-family
model: llmbench-sim
engine:
  kind: launch
  launch:
    kind: `+fakeFamily+`
    env: ["`+envAsCLI+`=1"]
    ready_timeout: 30s
workload: {concurrency: 4, requests: 24, prompt_tokens: 32, output_tokens: 16}
scrape: {interval: 250ms}
`)
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Client.Requests.OK != 24 || s.Server == nil || s.Server.Dialect != fakeFamily || s.Server.Counters["requests_finished"] != 24 {
		t.Errorf("requests %+v, server %+v: want 24 served by the launched engine and counted through the fake dialect", s.Client.Requests, s.Server)
	}
	// Calibration: the family's tokenizer API answered, none other was tried.
	var cal calibrate.Result
	if b, err := os.ReadFile(filepath.Join(dir, CalibrationFile)); err != nil || json.Unmarshal(b, &cal) != nil {
		t.Fatalf("calibration.json: %v", err)
	}
	if cal.Method != calibrate.MethodTokenize || slices.ContainsFunc(cal.Notes, func(n string) bool { return strings.Contains(n, "llama.cpp") }) {
		t.Errorf("calibration %+v: want the family's vLLM tokenizer first, no llama.cpp attempt", cal)
	}
	// Reconciliation: the TTFT decomposition states the family's span.
	found := false
	for _, f := range s.Findings {
		found = found || strings.Contains(f.Verdict, fakeTTFTSpan)
	}
	if !found {
		t.Errorf("no finding states the fake family's TTFT span; findings: %+v", s.Findings)
	}
}

// TestFakeEndpoint: an endpoint added with one registry entry is taken up
// by the whole pipeline: the scenario names it, the client sends to its
// path, calibration probes it, the built-in engine serves it (its truth
// names the path), and vLLM's request counter counts it.
func TestFakeEndpoint(t *testing.T) {
	fake := endpoints.Endpoint{Name: "fakechat", Path: "/fake/chat/completions", Kind: endpoints.KindChat,
		Reserved: "messages", Keeps: "as chat"}
	undo, err := endpoints.Register(fake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(undo)

	_, err = scenarios.Parse("f.yaml", []byte("name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\nrequest: {endpoint: nosuch}\n"))
	if err == nil || !strings.Contains(err.Error(), "fakechat") {
		t.Errorf("an unknown endpoint: %v, want an error naming fakechat among the known", err)
	}
	dir := runQuick(t, `
name: fake-endpoint
engine: {kind: sim, dialect: vllm, preset: tiny, process: inline, sim: {chat_template_tokens: 12}}
workload: {concurrency: 4, requests: 24, prompt_tokens: 32, output_tokens: 16}
request: {endpoint: fakechat}
scrape: {interval: 250ms}
`)
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Client.Requests.OK != 24 {
		t.Errorf("requests %+v: want 24 answered on the fake endpoint", s.Client.Requests)
	}
	served := 0
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		if tr.Endpoint != "/v1/fake/chat/completions" {
			t.Fatalf("the engine answered %s, want every request on the fake endpoint", tr.Endpoint)
		}
		served++
	}
	if served < 24 {
		t.Errorf("the engine's truth holds %d requests, want the 24 and the calibration's", served)
	}
	var cal calibrate.Result
	if b, err := os.ReadFile(filepath.Join(dir, CalibrationFile)); err != nil || json.Unmarshal(b, &cal) != nil {
		t.Fatalf("calibration.json: %v", err)
	} else if cal.Endpoint != "fakechat" || cal.Method != calibrate.MethodTokenize || cal.TemplateTokens < 12 {
		t.Errorf("calibration %+v: want the fake endpoint's chat template counted", cal)
	}

	// vLLM's request counter by handler counts the fake endpoint's path.
	fams, err := scrape.Parse([]byte(`# TYPE http_requests_total counter
http_requests_total{handler="/v1/fake/chat/completions",method="POST",status="2xx"} 5
http_requests_total{handler="/v1/models",method="GET",status="2xx"} 7
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 0
`), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	vllm, err := scrape.DialectFor(engines.VLLM)
	if err != nil {
		t.Fatal(err)
	}
	if got := vllm.Map(fams).Counters[scrape.RequestsReceived]; got != 5 {
		t.Errorf("vLLM's requests received = %v, want the fake endpoint's 5", got)
	}
}

// TestRegistriesEnumerated: every registered engine family is complete and
// every component that reads a family takes each one; the same for every
// endpoint. Nothing falls back silently to a default.
func TestRegistriesEnumerated(t *testing.T) {
	t.Parallel()
	for _, f := range engines.All() {
		if err := engines.Check(f); err != nil {
			t.Error(err)
		}
		if _, err := client.IDField(f.Name); err != nil {
			t.Errorf("client: %v", err)
		}
		d, err := scrape.DialectFor(f.Name)
		if err != nil || d.Name() != f.Name {
			t.Errorf("scrape: family %s: dialect %v, %v", f.Name, d, err)
		}
		// Calibration takes the family (Count validates before sending anything).
		if _, err := calibrate.Count(t.Context(), calibrate.Config{BaseURL: "http://127.0.0.1:1/v1", Dialect: f.Name}, nil); err != nil {
			t.Errorf("calibrate: family %s: %v", f.Name, err)
		}
		_, err = launch.New(launch.Config{Kind: f.Name, Model: "m"})
		if (err == nil) != (f.Launch != nil) {
			t.Errorf("launch: family %s (launch command %v): New = %v", f.Name, f.Launch, err)
		}
		yaml := "name: x\nmodel: m\nengine: {kind: external, base_url: 'http://h/v1', dialect: " + f.Name + "}\nworkload: {concurrency: 1, requests: 1}\n"
		if _, err := scenarios.Parse("f.yaml", []byte(yaml)); err != nil {
			t.Errorf("scenarios: %v", err)
		}
		yaml = "name: x\nmodel: m\nengine: {kind: sim, dialect: " + f.Name + "}\nworkload: {concurrency: 1, requests: 1}\n"
		if _, err := scenarios.Parse("f.yaml", []byte(yaml)); (err == nil) != f.Sim {
			t.Errorf("scenarios: the built-in engine speaking %s (sim %v): %v", f.Name, f.Sim, err)
		}
		if f.Sim {
			p, err := sim.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			e, err := sim.New(sim.Config{Dialect: f.Name, Params: p})
			if err != nil {
				t.Errorf("sim: %v", err)
			} else {
				_ = e.Stop(t.Context())
			}
		}
	}
	for _, ep := range endpoints.All() {
		if err := endpoints.Check(ep); err != nil {
			t.Error(err)
		}
		if _, err := client.New(client.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: ep.Name}); err != nil {
			t.Errorf("client: %v", err)
		}
		if _, err := calibrate.Count(t.Context(), calibrate.Config{BaseURL: "http://127.0.0.1:1/v1", Endpoint: ep.Name}, nil); err != nil {
			t.Errorf("calibrate: endpoint %s: %v", ep.Name, err)
		}
		yaml := "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\nrequest: {endpoint: " + ep.Name + "}\n"
		if _, err := scenarios.Parse("f.yaml", []byte(yaml)); err != nil {
			t.Errorf("scenarios: %v", err)
		}
		if !endpoints.IsServerPath(ep.ServerPath()) {
			t.Errorf("endpoint %s: its server path %s is not one engines' counters count", ep.Name, ep.ServerPath())
		}
	}
}
