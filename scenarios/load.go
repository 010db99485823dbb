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

	"go.yaml.in/yaml/v3"
)

//go:embed *.yaml *.jsonl
var examples embed.FS

// Examples returns the example scenarios shipped with llmbench
// (scenarios/*.yaml and the data files beside them). LoadFS loads one.
func Examples() fs.FS { return examples }

// Load reads and validates the scenario file at path. Every problem is
// reported, each naming file:line and the field, as an ErrorList.
func Load(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a scenario from bytes; name is the file name errors carry,
// and data files the scenario names are found relative to it on disk.
// ${VAR} references are expanded from the process environment.
func Parse(name string, data []byte) (Scenario, error) {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario %s: %w", name, err)
	}
	return parse(name, data, source{dir: dir}, os.LookupEnv)
}

// LoadFS reads and validates the scenario file name in fsys (such as
// Examples()); data files it names are read from fsys too.
func LoadFS(fsys fs.FS, name string) (Scenario, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Scenario{}, fmt.Errorf("load scenario: %w", err)
	}
	return parse(name, data, source{fsys: fsys, dir: path.Dir(name)}, os.LookupEnv)
}

func parse(name string, data []byte, src source, lookup func(string) (string, bool)) (Scenario, error) {
	d := newDecoder(name, lookup)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return Scenario{}, ErrorList{{File: name, Msg: "empty file: a scenario needs at least name, engine and workload"}}
	case err != nil:
		return Scenario{}, ErrorList{syntaxError(name, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return Scenario{}, ErrorList{syntaxError(name, err)}
	default:
		at := &next
		if len(next.Content) > 0 {
			at = next.Content[0]
		}
		return Scenario{}, ErrorList{{File: name, Line: at.Line, Column: at.Column, Msg: "a scenario file holds one YAML document; found a second one"}}
	}
	root := doc.Content[0]
	s := Scenario{src: src}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "want a mapping of scenario fields, got %s", describe(root))
		return Scenario{}, d.errs
	}
	d.value(root, "", reflect.ValueOf(&s).Elem())
	s.fill(d)
	s.validate(d)
	if len(d.errs) > 0 {
		return Scenario{}, d.errs.sorted()
	}
	s.raw = d.raw
	s.absolutize()
	return s, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns yaml.v3's "yaml: line N: msg" into an Error at that line.
// yaml.v3 reports some parser errors (an unclosed flow list, say) at the line
// where the construct began or just before the problem; scanner errors such
// as a tab in indentation are exact.
func syntaxError(file string, err error) *Error {
	e := &Error{File: file, Msg: "invalid YAML: " + err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	return e
}
