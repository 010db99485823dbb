package peers

// pythonJSON makes Python's json.dumps output standard JSON: Python writes
// NaN, Infinity and -Infinity bare (SGLang's "request_rate": Infinity, a
// mean of no samples), which encoding/json refuses. Outside strings each
// becomes null, which every reader here treats as "not given".
func pythonJSON(b []byte) []byte {
	var out []byte // allocated on the first replacement only
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if n := bareToken(b[i:]); n > 0 {
			if out == nil {
				out = append(make([]byte, 0, len(b)), b[:i]...)
			}
			out = append(out, "null"...)
			i += n - 1
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return b
	}
	return out
}

// bareToken is the length of a NaN, Infinity or -Infinity token at the
// start of b, 0 when none is there.
func bareToken(b []byte) int {
	for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
		if len(b) >= len(tok) && string(b[:len(tok)]) == tok {
			return len(tok)
		}
	}
	return 0
}
