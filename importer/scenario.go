package importer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/scenarios"
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

	peer // what AIPerf's and GuideLLM's command lines add
}

// peer is what the tools beyond vLLM's and SGLang's say that theirs do not:
// a duration, a sweep, length distributions, transient phases, stop rules.
// Zero values write nothing, so the argparse tools' scenarios stay as they were.
type peer struct {
	duration        time.Duration // each phase (each sweep point); 0: by requests alone
	arrival         string        // the open loop's process; "": poisson
	sweep           any           // workload.sweep; nil: one load
	prompt, output  any           // a length distribution that overrides inputLen/outputLen
	warmupFor       time.Duration // a warmup by time (warmups counts requests)
	cooldown        int           // cooldown requests
	cooldownFor     time.Duration
	timeout         time.Duration // one request's bound; 0: llmbench's default
	abortErrors     int
	abortErrorRate  float64
	trace           string  // a mooncake trace file replayed (its timestamps pace it)
	prefixGroups    int     // shared-prefix dataset: groups (prefixes) …
	prefixTokens    int     // … of this many tokens …
	promptsPerGroup int     // … each with this many distinct prompts
	promptStd       float64 // a normal length's standard deviation; 0: fixed
	outputStd       float64
	backendFlag     string              // the option that picks the API, for notes; "": --backend
	endpointFlag    string              // the option that names the API's path, for notes; "": backendFlag
	raw             map[string][]string // options kept as given (every value), for the rules that span options
	notes           []Dropped           // what options said that the scenario cannot
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
		opt := cmp.Or(d.backendFlag, "--backend") + " " + d.backend
		if d.endpointFlag != "" && d.endpoint != "" && endpoint != "" && !strings.HasSuffix(d.endpoint, "/completions") {
			opt = d.endpointFlag + " " + d.endpoint
		}
		note(opt, why)
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
	w = d.limits(w)
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
	if d.trace != "" { // the trace's timestamps are the load
		return w, notes
	}
	if d.sweep != nil {
		w = append(w, kv{"sweep", d.sweep})
		if d.arrival != "" { // an open-loop sweep
			w = append(w, kv{"arrival", d.arrival})
			if d.maxConcurrency > 0 {
				w = append(w, kv{"max_concurrency", d.maxConcurrency}, kv{"when_capped", "wait"})
			}
		}
		return w, notes
	}
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
		w = append(w, kv{"arrival", cmp.Or(d.arrival, "poisson")})
	} else {
		// vLLM's gamma gaps have shape burstiness: CV = 1/sqrt(shape)
		w = append(w, kv{"arrival", "gamma"}, kv{"cv", 1 / math.Sqrt(d.burstiness)})
	}
	if d.maxConcurrency > 0 {
		w = append(w, kv{"max_concurrency", d.maxConcurrency}, kv{"when_capped", "wait"})
	}
	return w, notes
}

// limits end the main phase (each sweep point), then come the phases
// around it and the rules that stop a run early.
func (d *draft) limits(w []kv) []kv {
	if d.duration > 0 {
		w = append(w, kv{"duration", d.duration.String()})
	}
	if d.numPrompts > 0 {
		w = append(w, kv{"requests", d.numPrompts})
	}
	if p := phase(d.warmups, d.warmupFor); p != nil {
		w = append(w, kv{"warmup", p})
	}
	if p := phase(d.cooldown, d.cooldownFor); p != nil {
		w = append(w, kv{"cooldown", p})
	}
	if d.timeout > 0 {
		w = append(w, kv{"timeout", d.timeout.String()})
	}
	if d.abortErrors > 0 || d.abortErrorRate > 0 {
		var a []kv
		if d.abortErrors > 0 {
			a = append(a, kv{"errors", d.abortErrors})
		}
		if d.abortErrorRate > 0 {
			a = append(a, kv{"error_rate", d.abortErrorRate})
		}
		node := ordered(a)
		node.Style = yaml.FlowStyle
		w = append(w, kv{"abort", node})
	}
	return w
}

// phase is a warmup or cooldown of so many requests and/or so long; nil: none.
func phase(requests int, dur time.Duration) any {
	switch {
	case requests > 0 && dur > 0:
		node := ordered([]kv{{"duration", dur.String()}, {"requests", requests}})
		node.Style = yaml.FlowStyle
		return node
	case dur > 0:
		return map[string]string{"duration": dur.String()}
	case requests > 0:
		return map[string]int{"requests": requests}
	}
	return nil
}

// data is where prompts come from and their lengths.
func (d *draft) data(w []kv, notes []Dropped) ([]kv, []Dropped) {
	if d.trace != "" {
		node := ordered([]kv{{"format", "mooncake"}, {"path", literal(absolute(d.trace))}})
		node.Style = yaml.FlowStyle
		return append(w, kv{"trace", node}), notes
	}
	if d.prefixGroups > 0 {
		node := ordered([]kv{{"type", "shared_prefix"}, {"groups", d.prefixGroups},
			{"prompts_per_group", d.promptsPerGroup}, {"prefix_tokens", d.prefixTokens}})
		node.Style = yaml.FlowStyle
		w = append(w, kv{"dataset", node})
	}
	switch {
	case d.dataset == "sharegpt" && d.datasetPath != "":
		w = append(w, kv{"dataset", map[string]string{"type": "sharegpt", "path": literal(absolute(d.datasetPath))}})
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
	prompt, output := d.prompt, d.output
	if prompt == nil {
		prompt = d.length(d.inputLen, false)
	}
	if output == nil {
		output = d.length(d.outputLen, true)
	}
	w = append(w, kv{"prompt_tokens", prompt}, kv{"output_tokens", output})
	return w, notes
}

// absolute is a path the tool reads from the working directory, for a
// scenario file whose paths are its own directory's.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
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

// jsonObject reads a JSON object option (--extra-body) into d's request
// body, member by member as bodyMember takes them: a member llmbench sets
// itself becomes the scenario's setting or a note, never an extra_body the
// scenario would refuse.
func jsonObject(d *draft, vals []string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(vals[0]), &m); err != nil {
		return fmt.Errorf("want a JSON object: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) { // the notes in one order
		if err := d.bodyMember("--extra-body", k, m[k]); err != nil {
			return err
		}
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

// bodyMember puts one member into every request's body, as the tool's
// option (opt) does; the members llmbench sets itself are the scenario's
// own settings instead (ignore_eos, the output length, stream), or a note.
func (d *draft) bodyMember(opt, k string, v any) error {
	n, isInt := v.(int)
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
		n, isInt = int(f), true // a JSON number
	}
	switch k {
	case "ignore_eos":
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("ignore_eos: want true or false")
		}
		d.ignoreEOS = b
	case "stream":
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("stream: want true or false")
		}
		d.stream = b
	case "max_tokens", "max_completion_tokens":
		if !isInt || n < 1 {
			return fmt.Errorf("%s: want a whole number above 0", k)
		}
		d.outputLen, d.outputStd, d.output = n, 0, nil
		d.keep("osl", nil)
	case "min_tokens", "model", "messages", "prompt", "input":
		d.notes = append(d.notes, Dropped{Option: fmt.Sprintf("%s %s:%v", opt, k, v),
			Why: "llmbench sets " + k + " itself (min_tokens: the output length, with workload.ignore_eos)"})
	default:
		if why, ok := scenarios.ReservedBodyMember(k); ok {
			d.notes = append(d.notes, Dropped{Option: fmt.Sprintf("%s %s:%v", opt, k, v), Why: "llmbench sets " + k + " itself: " + why})
			return nil
		}
		if d.extraBody == nil {
			d.extraBody = map[string]any{}
		}
		d.extraBody[k] = v
	}
	return nil
}

// keep records an option's values under a name, for finish's rules that span options.
func (d *draft) keep(name string, vals []string) {
	if d.raw == nil {
		d.raw = map[string][]string{}
	}
	d.raw[name] = append(d.raw[name], vals...) // the key is there even without values
}

// has reports whether an option kept under name was given.
func (d *draft) has(name string) bool {
	_, ok := d.raw[name]
	return ok
}
