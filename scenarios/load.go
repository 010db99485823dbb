package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/internal/inputfile"
	"go.yaml.in/yaml/v3"
)

//go:embed *.yaml *.jsonl *.csv
var examples embed.FS

// Examples returns the example scenarios shipped with llmbench
// (scenarios/*.yaml and the data files beside them). LoadFS loads one.
func Examples() fs.FS { return examples }

// Load reads and validates the scenario file at path. Every problem is
// reported, each naming file:line and the field, as an ErrorList.
// Overrides replace fields of the file before it is decoded (--set).
func Load(path string, overrides ...Override) (Scenario, error) {
	return LoadEnv(path, os.LookupEnv, overrides...)
}

// LoadEnv is Load with ${VAR} references expanded from lookup instead of
// the process environment.
func LoadEnv(path string, lookup func(string) (string, bool), overrides ...Override) (Scenario, error) {
	data, err := inputfile.ReadAll(path, inputfile.Scenario)
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario %s: %w", path, err)
	}
	return parse(path, data, source{dir: dir}, lookup, overrides...)
}

// Parse validates a scenario from bytes; name is the file name errors carry,
// and data files the scenario names are found relative to it on disk.
// ${VAR} references are expanded from the process environment.
func Parse(name string, data []byte, overrides ...Override) (Scenario, error) {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario %s: %w", name, err)
	}
	return parse(name, data, source{dir: dir}, os.LookupEnv, overrides...)
}

// LoadFS reads and validates the scenario file name in fsys (such as
// Examples()); data files it names are read from fsys too.
func LoadFS(fsys fs.FS, name string) (Scenario, error) {
	data, err := readFS(fsys, name)
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario: %w", err)
	}
	return parse(name, data, source{fsys: fsys, dir: path.Dir(name)}, os.LookupEnv)
}

// readFS reads a scenario file from fsys within the bound on one.
func readFS(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(inputfile.Bound(f, name, inputfile.Scenario))
}

func parse(name string, data []byte, src source, lookup func(string) (string, bool), overrides ...Override) (Scenario, error) {
	d := newDecoder(name, lookup)
	root, err := rootMapping(d, data)
	if err != nil {
		return Scenario{}, err
	}
	for _, o := range overrides {
		if err := o.apply(d, root); err != nil {
			d.errs = append(d.errs, &Error{File: o.String(), Msg: err.Error()})
		}
	}
	if len(d.errs) > 0 {
		return Scenario{}, d.errs
	}
	s := Scenario{src: src}
	d.value(root, "", reflect.ValueOf(&s).Elem())
	s.fill(d)
	s.validate(d)
	if len(d.errs) > 0 {
		return Scenario{}, d.errs.sorted()
	}
	s.raw = d.raw
	s.src.engine = d.engine
	s.absolutize()
	return s, nil
}

// rootMapping reads the file's one YAML document, which must be a mapping.
func rootMapping(d *decoder, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil, ErrorList{{File: d.file, Msg: "empty file: a scenario needs at least name, engine and workload"}}
	case err != nil:
		return nil, ErrorList{syntaxError(d.file, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, ErrorList{syntaxError(d.file, err)}
	default:
		at := &next
		if len(next.Content) > 0 {
			at = next.Content[0]
		}
		return nil, ErrorList{{File: d.file, Line: at.Line, Column: at.Column, Msg: "a scenario file holds one YAML document; found a second one"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "want a mapping of scenario fields, got %s", describe(root))
		return nil, d.errs
	}
	return root, nil
}

// LoadGates reads only the gates section of the scenario file at path (nil
// when it has none). It is what `llmbench gate` needs of a run directory's
// scenario.yaml, which may have moved to a machine that has neither the
// scenario's data files nor the environment variables its other fields name:
// only the gates are decoded, validated and ${VAR}-expanded.
func LoadGates(path string) (*Gates, error) {
	data, err := inputfile.ReadAll(path, inputfile.Scenario)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return ParseGates(path, data)
}

// ParseGates is LoadGates for a scenario already read (data, from path):
// a run directory's scenario.yaml, which package rundir reads.
func ParseGates(path string, data []byte) (*Gates, error) {
	d := newDecoder(path, os.LookupEnv)
	root, err := rootMapping(d, data)
	if err != nil {
		return nil, err
	}
	var g *Gates
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "gates" {
			d.value(root.Content[i+1], "gates", reflect.ValueOf(&g).Elem())
		}
	}
	g.validate(d)
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return g, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns yaml.v3's "yaml: line N: msg" into an Error at that line.
// yaml.v3 reports a parser error that has a context (an unclosed `{` or `[`:
// "did not find expected ',' or '}'") at the context's line counted from 0,
// one line early, and its scanner errors (a tab in indentation, an unclosed
// quote) counted from 1: the former are moved to the line where the
// construct began.
func syntaxError(file string, err error) *Error {
	e := &Error{File: file, Msg: "invalid YAML: " + err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
		if strings.HasPrefix(m[2], "did not find expected") {
			e.Line++
		}
	}
	return e
}
