package scrape

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

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

// dialects lists every dialect DialectFor knows, in detection priority order.
var dialects = []tableDialect{sglang, vllm, fastdeploy, tgi, llamacpp, triton, trtllm}

// DialectNames lists the dialects DialectFor accepts besides Auto.
func DialectNames() []string {
	names := make([]string, len(dialects))
	for i, d := range dialects {
		names[i] = d.name
	}
	return names
}

// DialectFor returns the named dialect; "" or Auto returns one that detects
// the engine from the names it sees (see Detect).
func DialectFor(name string) (Dialect, error) {
	if name == "" || name == Auto {
		return autoDialect{}, nil
	}
	for _, d := range dialects {
		if d.name == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown metrics dialect %q (known: %s, %s)", name, strings.Join(DialectNames(), ", "), Auto)
}

// Detect picks the dialect whose metric-name prefixes cover the most
// families, or nil when no family has a known prefix. Ties go to the dialect
// listed first, so an engine behind a gateway that re-exports a few foreign
// names still wins with its own, larger set.
func Detect(fams []*dto.MetricFamily) Dialect {
	best, bestN := -1, 0
	for i, d := range dialects {
		n := 0
		for _, f := range fams {
			if d.owns(f.GetName()) {
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
	return dialects[best]
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
	_ Dialect   = tableDialect{}
	_ Describer = tableDialect{}
)

func (d tableDialect) Name() string { return d.name }

func (d tableDialect) owns(name string) bool {
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
				v, ok, invalid = ix.read(name, r.sel, d.mirrors, r.concept.Fraction(), r.concept.Kind() == KindCounter)
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
	chosen := dialects
	if dialect != "" && dialect != Auto {
		d, err := DialectFor(dialect)
		if err != nil {
			return "", err
		}
		chosen = []tableDialect{d.(tableDialect)}
	}
	var alts []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			alts = append(alts, p)
		}
	}
	for _, d := range chosen {
		for _, p := range d.prefixes {
			add(regexp.QuoteMeta(p) + ".+")
		}
		names := append([]string(nil), d.reads...)
		for _, r := range d.rules {
			names = append(names, r.names...)
		}
		for _, n := range names {
			if !d.owns(n) {
				add(regexp.QuoteMeta(n))
			}
		}
	}
	return strings.Join(alts, "|"), nil
}
