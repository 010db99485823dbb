package scenarios

import (
	"errors"
	"fmt"
	"strings"
)

// expandEnv substitutes ${NAME} and ${NAME:-default} in a scalar's text.
// "$${" writes a literal "${"; any other "$" is kept as it is, so URLs and
// passwords containing "$" need no escaping. changed reports whether anything
// was substituted (the original text is then what Resolved writes back, so a
// secret never reaches the run directory).
func expandEnv(s string, lookup func(string) (string, bool)) (out string, changed bool, err error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), changed, nil
		}
		b.WriteString(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "$${"):
			b.WriteString("${")
			s = s[3:]
			changed = true
		case strings.HasPrefix(s, "${"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", false, errors.New(`unterminated "${": write "$${" for a literal "${"`)
			}
			name, def, hasDef := strings.Cut(s[2:end], ":-")
			if !validEnvName(name) {
				return "", false, fmt.Errorf("invalid environment variable name %q in %q", name, s[:end+1])
			}
			val, ok := lookup(name)
			switch {
			case ok:
				b.WriteString(val)
			case hasDef:
				b.WriteString(def)
			default:
				return "", false, fmt.Errorf("environment variable %s is not set (write ${%s:-default} for a fallback)", name, name)
			}
			s = s[end+1:]
			changed = true
		default:
			b.WriteByte('$')
			s = s[1:]
		}
	}
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
