package sourceshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the longest a non-test function may be, from its func
// keyword to its closing brace (decision 0027).
const maxFuncLines = 150

// longAllowed are the functions allowed past maxFuncLines, by name
// ("package/path.Func" or "package/path.Type.Method"), each with its reason:
// only literal tables, whose length is their data. An entry that no longer
// names a long function fails the test, so the list cannot outlive its reason.
var longAllowed = map[string]string{}

// TestNoLongFunctions walks every non-test, non-generated Go file of the
// module and fails on any function longer than maxFuncLines that
// longAllowed does not name.
func TestNoLongFunctions(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	long := map[string]int{}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// The go tool ignores these directories too.
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sizes, err := funcSizes(filepath.ToSlash(rel), src)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files++
		for _, s := range sizes {
			if s.lines > maxFuncLines {
				long[s.name] = s.lines
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files under %s: is this the module's tree?", files, root)
	}
	for _, name := range slices.Sorted(maps.Keys(long)) {
		if _, ok := longAllowed[name]; !ok {
			t.Errorf("%s is %d lines: split it into functions of at most %d (a literal table may be listed in longAllowed, with its reason)", name, long[name], maxFuncLines)
		}
	}
	for name := range longAllowed {
		if _, ok := long[name]; !ok {
			t.Errorf("longAllowed names %s, which is no longer a function over %d lines: remove the entry", name, maxFuncLines)
		}
	}
}

// funcSize is a function's name and its length in lines.
type funcSize struct {
	name  string
	lines int
}

// funcSizes measures the functions of one Go source file of package dir
// (slash-separated, relative to the module root: "report/gates"): each
// declared function and method, and each function literal declared at
// package level (var f = func...), named after its variable. Generated files
// measure nothing: their length is their generator's business.
func funcSizes(dir string, src []byte) ([]funcSize, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	var out []funcSize
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Body == nil {
				continue // implemented elsewhere (assembly, linkname)
			}
			name := decl.Name.Name
			if decl.Recv != nil && len(decl.Recv.List) == 1 {
				name = receiverType(decl.Recv.List[0].Type) + "." + name
			}
			out = append(out, funcSize{dir + "." + name, lines(decl)})
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.FuncLit); ok && i < len(vs.Names) {
						out = append(out, funcSize{dir + "." + vs.Names[i].Name, lines(lit)})
					}
				}
			}
		}
	}
	return out, nil
}

// receiverType is the name of a method's receiver type, without pointer or
// type parameters: "Engine" for (e *Engine), "list" for (l *list[T]).
func receiverType(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return "?"
		}
	}
}

// moduleRoot is the directory holding go.mod, above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
