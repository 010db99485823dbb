package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// environ is llmbench's environment, which the engine inherits.
var environ = os.Environ

// lookPath finds the program the way a shell would, but with the PATH of the
// engine's environment (the last PATH= entry of env), so that Config.Env can
// point at a virtualenv. A name with a slash is taken as is (relative to dir).
// Relative PATH entries are skipped: they would depend on the working directory.
func lookPath(file string, env []string, dir string) (string, error) {
	if strings.Contains(file, "/") {
		p := file
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("program %s: %w", file, err)
		}
		return file, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q not found in PATH (install it, put it on env PATH, or set command): %w", file, exec.ErrNotFound)
}

// executable: a regular file with an execute bit.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// quoteArgv renders argv for a log line, quoting what a shell would split.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`{}*?;&|<>()") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
