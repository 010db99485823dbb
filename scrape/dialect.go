package scrape

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/llmbench-org/llmbench/engines"
	dto "github.com/prometheus/client_model/go"
)

// Dialect maps one engine's metric families onto canonical concepts. Map is a
// pure function of its input: no I/O, no clock, no memory between calls.
type Dialect interface {
	Name() string
	Map(fams []*dto.MetricFamily) Snapshot
}

// Describer is the optional ability of a dialect to say where each concept
// comes from and what is peculiar about it, so reports and `llmbench inspect`
// can state it (e.g. that SGLang's ITL histogram counts tokens).
type Describer interface {
	Describe() []Mapping
}

// Mapping says which metric carries a concept in a dialect.
type Mapping struct {
	Concept Concept  `json:"concept"`
	Metrics []string `json:"metrics"`        // exposed names, the current one first, older aliases after
	Note    string   `json:"note,omitempty"` // what a reader must know to compare it with the client
}

// Auto is the dialect name that detects the engine from the metric names on
// every scrape; "" means the same.
const Auto = "auto"

// EngineDialect is the metric mapping of one engine family (package
// engines), registered under the family's name by the family's dialect file
// (sglang.go, …). Besides mapping, it says which metric names are its
// engine's (Detect) and what to ask a Prometheus server for
// (MetricNamePattern).
type EngineDialect interface {
	Dialect
	// Owns reports whether a metric name is this engine's own.
	Owns(metric string) bool
	// NamePatterns are RE2 alternatives that together match every metric
	// name Map may read.
	NamePatterns() []string
}

// dialectFiles holds every registered EngineDialect by family name. The
// families' order (detection priority) is the engines registry's; scrape
// keeps no list of its own. Reads happen once per scrape, not per sample.
var dialectFiles = struct {
	sync.RWMutex
	m map[string]EngineDialect
}{m: map[string]EngineDialect{}}

// RegisterDialect registers d as the metric mapping of the engine family
// of the same name, which must be registered with package engines and have
// no dialect yet. It returns the function that removes it again. The
// built-in families' dialect files call it from init.
func RegisterDialect(d EngineDialect) (unregister func(), err error) {
	name := d.Name()
	if !engines.Known(name) {
		return nil, fmt.Errorf("scrape: dialect %q: no engine family of that name is registered (package engines)", name)
	}
	dialectFiles.Lock()
	defer dialectFiles.Unlock()
	if _, dup := dialectFiles.m[name]; dup {
		return nil, fmt.Errorf("scrape: dialect %q is already registered", name)
	}
	dialectFiles.m[name] = d
	return func() {
		dialectFiles.Lock()
		defer dialectFiles.Unlock()
		delete(dialectFiles.m, name)
	}, nil
}

// mustRegister registers a built-in dialect file; a family it names that
// package engines lacks is a build mistake.
func mustRegister(d EngineDialect) {
	if _, err := RegisterDialect(d); err != nil {
		panic(err)
	}
}

// dialects returns the registered dialects in the engine families' order
// (detection priority), and an error naming every family that has none.
func dialects() ([]EngineDialect, error) {
	dialectFiles.RLock()
	defer dialectFiles.RUnlock()
	var out []EngineDialect
	var missing []string
	for _, name := range engines.Names() {
		if d, ok := dialectFiles.m[name]; ok {
			out = append(out, d)
		} else {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("scrape: engine families without a metrics dialect: %s (each needs a dialect file registering one)", strings.Join(missing, ", "))
	}
	return out, nil
}

// DialectNames lists the dialects DialectFor accepts besides Auto: every
// engine family's name (engines.Names), in detection priority order.
func DialectNames() []string { return engines.Names() }

// DialectFor returns the named dialect; "" or Auto returns one that detects
// the engine from the names it sees (see Detect). A registered engine
// family without a dialect is an error, as is an unknown name.
func DialectFor(name string) (Dialect, error) {
	if name == "" || name == Auto {
		return autoDialect{}, nil
	}
	if !engines.Known(name) {
		return nil, fmt.Errorf("unknown metrics dialect %q (known: %s, %s)", name, strings.Join(DialectNames(), ", "), Auto)
	}
	dialectFiles.RLock()
	d, ok := dialectFiles.m[name]
	dialectFiles.RUnlock()
	if !ok {
		return nil, fmt.Errorf("engine family %q has no metrics dialect (a scrape dialect file registers one)", name)
	}
	return d, nil
}

// Detect picks the dialect whose metric-name prefixes cover the most
// families, or nil when no family has a known prefix. Ties go to the dialect
// listed first, so an engine behind a gateway that re-exports a few foreign
// names still wins with its own, larger set. A family without a dialect
// cannot be detected (DialectFor and the registry test name it).
func Detect(fams []*dto.MetricFamily) Dialect {
	ds, _ := dialects()
	best, bestN := -1, 0
	for i, d := range ds {
		n := 0
		for _, f := range fams {
			if d.Owns(f.GetName()) {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return nil
	}
	return ds[best]
}

// autoDialect detects the dialect on every Map call. With no known names it
// returns an empty snapshot whose Dialect is empty: nothing is guessed.
type autoDialect struct{}

var _ Dialect = autoDialect{}

func (autoDialect) Name() string { return Auto }

func (autoDialect) Map(fams []*dto.MetricFamily) Snapshot {
	if d := Detect(fams); d != nil {
		return d.Map(fams)
	}
	return Snapshot{}
}

// rule maps one concept onto the first of several metric names present.
type rule struct {
	concept Concept
	names   []string // exposed names (counters with _total), current first
	sel     selector // which series of the family count
	scale   float64  // unit factor to seconds (histograms) or to the canonical unit; 0 means 1
	// fromSum reads a counter concept from the _sum of a histogram family
	// (TGI has token-length histograms but no token counters).
	fromSum bool
	note    string
}

// tableDialect is a dialect written as a table of rules: most engines need
// nothing more than names, label filters and a unit.
type tableDialect struct {
	name     string
	prefixes []string          // name prefixes that identify the engine
	aliases  map[string]string // prefix rewrites applied before lookup, e.g. gateway re-exports "sglang_" → "sglang:"
	// mirrors are labels whose series repeat one another (every TP rank of
	// one scheduler reports the same batch): within a group that differs only
	// in them, the largest value is kept instead of the sum.
	mirrors []string
	rules   []rule
	notes   []Mapping // notes on concepts that no rule maps (why they are absent)
	// derive computes concepts that need more than one metric; it runs after
	// the rules and may read and fill the snapshot. reads names the metrics
	// it uses, so `llmbench inspect` does not list them as unread.
	derive func(ix familyIndex, s *Snapshot)
	reads  []string
}

var (
	_ EngineDialect = tableDialect{}
	_ Describer     = tableDialect{}
)

func (d tableDialect) Name() string { return d.name }

// Owns reports whether name has one of the engine's prefixes.
func (d tableDialect) Owns(name string) bool {
	for _, p := range d.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (d tableDialect) Map(fams []*dto.MetricFamily) Snapshot {
	ix := newFamilyIndex(fams, d.aliases)
	s := Snapshot{
		Dialect:    d.name,
		Gauges:     map[Concept]float64{},
		Counters:   map[Concept]float64{},
		Histograms: map[Concept]Histogram{},
	}
	for _, r := range d.rules {
		if _, bad := s.Invalid[r.concept]; bad || s.has(r.concept) {
			continue // the first name present decides
		}
		for _, name := range r.names {
			var (
				v       float64
				series  map[string]float64
				h       Histogram
				ok      bool
				invalid string
			)
			switch {
			case r.concept.Kind() == KindHistogram:
				h, ok, invalid = ix.readHistogram(name, r.sel, d.mirrors)
			case r.fromSum:
				h, ok, invalid = ix.readHistogram(name, r.sel, d.mirrors)
				v = h.Sum
			default:
				v, series, ok, invalid = ix.read(name, r.sel, d.mirrors, r.concept.Fraction(), r.concept.Kind() == KindCounter)
			}
			if invalid != "" {
				// Present but unusable: absent, with the reason; an older
				// name is not read instead.
				s.invalidate(r.concept, invalid)
				break
			}
			if !ok {
				continue
			}
			switch r.concept.Kind() {
			case KindHistogram:
				s.Histograms[r.concept] = h.scaled(r.scale)
			case KindCounter:
				s.Counters[r.concept] = scale(v, r.scale)
				if series != nil {
					for k, x := range series {
						series[k] = scale(x, r.scale)
					}
					if s.Series == nil {
						s.Series = map[Concept]map[string]float64{}
					}
					s.Series[r.concept] = series
				}
			default:
				s.Gauges[r.concept] = scale(v, r.scale)
			}
			break
		}
	}
	if d.derive != nil {
		d.derive(ix, &s)
	}
	return s
}

func scale(v, f float64) float64 {
	if f != 0 {
		return v * f
	}
	return v
}

func (d tableDialect) Describe() []Mapping {
	var out []Mapping
	byConcept := map[Concept]int{}
	for _, r := range d.rules {
		if i, ok := byConcept[r.concept]; ok {
			out[i].Metrics = append(out[i].Metrics, r.names...)
			if r.note != "" && out[i].Note == "" {
				out[i].Note = r.note
			}
			continue
		}
		byConcept[r.concept] = len(out)
		out = append(out, Mapping{Concept: r.concept, Metrics: append([]string(nil), r.names...), Note: r.note})
	}
	for _, n := range d.notes {
		if i, ok := byConcept[n.Concept]; ok {
			out[i].Metrics = append(out[i].Metrics, n.Metrics...)
			out[i].Note = strings.TrimSpace(out[i].Note + " " + n.Note)
			continue
		}
		byConcept[n.Concept] = len(out)
		out = append(out, n)
	}
	sort.SliceStable(out, func(i, j int) bool { return conceptOrder(out[i].Concept) < conceptOrder(out[j].Concept) })
	return out
}

// MetricNamePattern is a regular expression (RE2; PromQL anchors it)
// matching every metric name the named dialect may read, or that any
// dialect may read for "" and Auto: what to ask a Prometheus server for.
func MetricNamePattern(dialect string) (string, error) {
	var chosen []EngineDialect
	if dialect != "" && dialect != Auto {
		d, err := DialectFor(dialect)
		if err != nil {
			return "", err
		}
		chosen = []EngineDialect{d.(EngineDialect)}
	} else {
		ds, err := dialects()
		if err != nil {
			return "", err
		}
		chosen = ds
	}
	var alts []string
	seen := map[string]bool{}
	for _, d := range chosen {
		for _, p := range d.NamePatterns() {
			if !seen[p] {
				seen[p] = true
				alts = append(alts, p)
			}
		}
	}
	return strings.Join(alts, "|"), nil
}

// NamePatterns matches the engine's prefixes, and the names its rules and
// derive read that lie outside them.
func (d tableDialect) NamePatterns() []string {
	var alts []string
	for _, p := range d.prefixes {
		alts = append(alts, regexp.QuoteMeta(p)+".+")
	}
	names := append([]string(nil), d.reads...)
	for _, r := range d.rules {
		names = append(names, r.names...)
	}
	for _, n := range names {
		if !d.Owns(n) {
			alts = append(alts, regexp.QuoteMeta(n))
		}
	}
	return alts
}
