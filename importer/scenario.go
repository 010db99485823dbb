package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/endpoints"
)

// draft is what a tool's command line says, in the tool's own terms, with
// the tool's defaults filled; scenario turns it into llmbench's.
type draft struct {
	baseURL, host string
	port          int
	endpoint      string // the path requests go to ("/v1/completions")
	backend       string // the tool's request format
	model         string
	seed          *int

	numPrompts     int
	rate           float64 // +Inf: every request at once
	maxConcurrency int
	burstiness     float64
	warmups        int

	dataset, datasetPath string
	inputLen, outputLen  int
	rangeRatio           float64
	// lengths turns a random length and the range ratio into a range, as
	// the tool samples it.
	lengths     func(n int, ratio float64, output bool) (lo, hi int)
	sharegptOut int

	ignoreEOS bool
	stream    bool
	headers   map[string]string
	extraBody map[string]any
	slo       map[string]time.Duration

	// backendAPI is the API a backend sends (chat or completions) and, for
	// one that sends neither, why; portFor is a backend's default port
	// (when port is 0).
	backendAPI func(backend string) (endpoint string, note string)
	portFor    func(backend string) int
}

// scenarioDoc is the scenario file an import writes, in the scenario's
// own field names.
type scenarioDoc struct {
	Name     string         `yaml:"name"`
	Seed     *int           `yaml:"seed,omitempty"`
	Model    string         `yaml:"model,omitempty"`
	Engine   yaml.Node      `yaml:"engine"`
	Workload yaml.Node      `yaml:"workload"`
	Request  map[string]any `yaml:"request"`
	SLO      map[string]any `yaml:"slo,omitempty"`
}

// scenario is d as an llmbench scenario, and the notes on what could not be
// carried exactly (they join the dropped options).
func (d *draft) scenario(tool string) (scenarioDoc, []Dropped) {
	var notes []Dropped
	note := func(opt, why string) { notes = append(notes, Dropped{Option: opt, Why: why}) }
	doc := scenarioDoc{Name: tool + "-import", Seed: d.seed, Model: literal(d.model)}

	root := d.baseURL
	if d.port == 0 {
		d.port = d.portFor(d.backend)
	}
	if root == "" {
		root = "http://" + net.JoinHostPort(d.host, strconv.Itoa(d.port))
	}
	base := root
	if b, ok := endpoints.APIBase(root); ok {
		base = b
	}
	// Both tools send $OPENAI_API_KEY as a bearer token when it is set.
	doc.Engine = ordered([]kv{{"kind", "external"}, {"base_url", literal(base)}, {"api_key_env", "OPENAI_API_KEY"}})

	endpoint, why := d.api()
	if why != "" {
		note("--backend "+d.backend, why)
	}
	doc.Request = map[string]any{"endpoint": endpoint}
	if !d.stream {
		doc.Request["stream"] = false
	}
	if len(d.headers) > 0 {
		doc.Request["headers"] = literalMap(d.headers)
	}
	if len(d.extraBody) > 0 {
		doc.Request["extra_body"] = d.extraBody
	}
	if len(d.slo) > 0 {
		doc.SLO = map[string]any{}
		for k, v := range d.slo {
			doc.SLO[k] = v.String()
		}
	}
	var w []kv
	w, notes = d.load(w, notes)
	w = append(w, kv{"requests", d.numPrompts})
	if d.warmups > 0 {
		w = append(w, kv{"warmup", map[string]int{"requests": d.warmups}})
	}
	w, notes = d.data(w, notes)
	w = append(w, kv{"ignore_eos", d.ignoreEOS})
	doc.Workload = ordered(w)
	return doc, notes
}

// api is the llmbench endpoint the tool's requests go to, from the path
// (vLLM's --endpoint) or the backend, and a note when that is not what the
// tool sends.
func (d *draft) api() (string, string) {
	ep, why := d.backendAPI(d.backend)
	switch {
	case d.endpoint == "":
	case strings.HasSuffix(d.endpoint, "/chat/completions"):
		ep = endpoints.Chat
	case strings.HasSuffix(d.endpoint, "/completions"):
		ep = endpoints.Completions
	case strings.HasSuffix(d.endpoint, endpoints.MessagesPath):
		ep = endpoints.Messages
	default:
		why = "requests to " + d.endpoint + ": llmbench sends the OpenAI chat or completions API; " + ep + " instead"
	}
	return ep, why
}

// load is the arrival process: what the tool does at an infinite rate (all
// at once, behind the concurrency cap if any) is a closed loop.
func (d *draft) load(w []kv, notes []Dropped) ([]kv, []Dropped) {
	if math.IsInf(d.rate, 1) {
		users := d.maxConcurrency
		if users == 0 {
			// every request at once: as many users as requests
			users = d.numPrompts
		}
		w = append(w, kv{"concurrency", users})
		if d.burstiness != 1 {
			notes = append(notes, Dropped{Option: "--burstiness " + fmtFloat(d.burstiness), Why: "only with a finite --request-rate, as in the tool"})
		}
		return w, notes
	}
	w = append(w, kv{"rate", d.rate})
	if d.burstiness == 1 {
		w = append(w, kv{"arrival", "poisson"})
	} else {
		// vLLM's gamma gaps have shape burstiness: CV = 1/sqrt(shape)
		w = append(w, kv{"arrival", "gamma"}, kv{"cv", 1 / math.Sqrt(d.burstiness)})
	}
	if d.maxConcurrency > 0 {
		w = append(w, kv{"max_concurrency", d.maxConcurrency}, kv{"when_capped", "wait"})
	}
	return w, notes
}

// data is where prompts come from and their lengths.
func (d *draft) data(w []kv, notes []Dropped) ([]kv, []Dropped) {
	switch {
	case d.dataset == "sharegpt" && d.datasetPath != "":
		// the tool reads it from the working directory; a scenario file's
		// paths are its own directory's
		path, err := filepath.Abs(d.datasetPath)
		if err != nil {
			path = d.datasetPath
		}
		w = append(w, kv{"dataset", map[string]string{"type": "sharegpt", "path": literal(path)}})
		if d.sharegptOut > 0 {
			w = append(w, kv{"output_tokens", d.sharegptOut})
		}
		return w, notes
	case d.dataset == "sharegpt":
		notes = append(notes, Dropped{Option: "--dataset-name sharegpt", Why: "without --dataset-path the tool downloads ShareGPT; llmbench downloads nothing: synthetic prompts of the random dataset's lengths instead; give --dataset-path FILE"})
	case d.dataset != "random":
		notes = append(notes, Dropped{Option: "--dataset-name " + d.dataset, Why: "no such dataset in llmbench: synthetic prompts of the random dataset's lengths instead"})
	}
	if d.datasetPath != "" && d.dataset != "sharegpt" {
		notes = append(notes, Dropped{Option: "--dataset-path " + d.datasetPath, Why: "only a ShareGPT file is carried over"})
	}
	w = append(w, kv{"prompt_tokens", d.length(d.inputLen, false)}, kv{"output_tokens", d.length(d.outputLen, true)})
	return w, notes
}

func (d *draft) length(n int, output bool) any {
	lo, hi := d.lengths(n, d.rangeRatio, output)
	if lo == hi {
		return n
	}
	node := ordered([]kv{{"dist", "uniform"}, {"min", lo}, {"max", hi}})
	node.Style = yaml.FlowStyle
	return node
}

type kv struct {
	k string
	v any
}

// ordered is a mapping in the order given, as a person would write it.
func ordered(fields []kv) yaml.Node {
	n := yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fields {
		v, isNode := f.v.(yaml.Node)
		if !isNode {
			_ = v.Encode(f.v)
			if v.Kind == yaml.MappingNode {
				v.Style = yaml.FlowStyle
			}
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.k}, &v)
	}
	return n
}

// render writes doc with a header saying where it came from and every
// option not carried over.
func render(tool, command string, doc scenarioDoc, dropped []Dropped) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Imported from %s by `llmbench import %s`.\n", command, tool)
	if len(dropped) == 0 {
		buf.WriteString("# Every option was carried over.\n")
	} else {
		buf.WriteString("# Not carried over:\n")
		for _, d := range dropped {
			fmt.Fprintf(&buf, "#   %s\n", strings.ReplaceAll(d.String(), "\n", " "))
		}
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// literal keeps a value from the tool's command line from reading as a
// ${VAR} reference: the shell has expanded what the user meant.
func literal(s string) string { return strings.ReplaceAll(s, "${", "$${") }

func literalMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = literal(v)
	}
	return out
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// jsonObject reads a JSON object option (--extra-body) into d's extra body.
func jsonObject(d *draft, vals []string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(vals[0]), &m); err != nil {
		return fmt.Errorf("want a JSON object: %w", err)
	}
	if d.extraBody == nil {
		d.extraBody = map[string]any{}
	}
	for k, v := range m {
		d.extraBody[k] = v
	}
	return nil
}

// bodyField sets one sampling parameter of the request body.
func bodyField(key string, integer bool) func(*draft, []string) error {
	return func(d *draft, vals []string) error {
		var v any
		if integer {
			var n int
			if err := scanInt(vals[0], &n); err != nil {
				return err
			}
			v = n
		} else {
			f, err := strconv.ParseFloat(vals[0], 64)
			if err != nil {
				return fmt.Errorf("want a number")
			}
			v = f
		}
		if d.extraBody == nil {
			d.extraBody = map[string]any{}
		}
		d.extraBody[key] = v
		return nil
	}
}
