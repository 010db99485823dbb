// Package redact is llmbench's one policy for text that leaves the process:
// secrets are replaced by Marker wherever a file is written or a line is
// shown (results files, engine.log, printed lines, every TUI frame), and
// terminal control characters from outside are defused before they reach a
// screen (Printable). It imports nothing of llmbench's, so every package can
// apply the same policy (docs/decisions/0018).
package redact

import (
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Marker replaces a secret wherever llmbench writes or prints one. A plain
// word, not "[REDACTED]": it survives a URL's encoding unchanged (brackets
// in a userinfo come out as %5B...%5D) and no pattern below reads it as the
// start of another secret, so Text stays idempotent.
const Marker = "REDACTED"

var (
	// A URL with a scheme, up to the first character that cannot be part
	// of it in running text (quotes, brackets, space).
	urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>()\[\]{}]+`)
	// userinfo with a password that url.Parse could not take apart.
	userinfoPassword = regexp.MustCompile(`(://[^/?#@\s:]*):[^/?#@\s]*@`)
	// A query parameter's value, in a URL or a bare path ("/metrics?token=x").
	queryValue = regexp.MustCompile(`([?&][^=&?#\s"']+=)[^&#\s"']+`)
	// key=value or key: value pairs whose key names a secret, in free text.
	secretPair = regexp.MustCompile(`(?i)\b((?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|key)["']?\s*[:=]\s*\[?["']?)([^\s"'&,;}\]]+)`)
	// An Authorization header's credential, whatever its scheme, and a
	// bearer token anywhere (a JWT's characters and ':' included).
	authorization = regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|apikey)\s+)?[^\s"',;)\]}]+`)
	bearer        = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=:-]+`)
	// OpenAI-shaped keys (sk-..., sk-proj-..., sk-ant-...), and other
	// prefixed API keys.
	skKey = regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}`)
)

// Text removes secrets from s: the passwords of URLs' userinfo
// (user:pass@host) and a token alone in a userinfo (TOKEN@host), the values
// of query parameters (?token=..., &key=...), the values of key=value pairs
// that name a secret (api_key=..., password: ...), bearer and basic
// credentials ("Authorization: Bearer ...") and sk-... keys each become
// Marker. It is idempotent: Text(Text(s)) == Text(s).
func Text(s string) string {
	if s == "" {
		return s
	}
	s = urlInText.ReplaceAllStringFunc(s, URL)
	s = userinfoPassword.ReplaceAllString(s, "${1}:"+Marker+"@")
	s = queryValue.ReplaceAllString(s, "${1}"+Marker)
	s = authorization.ReplaceAllStringFunc(s, func(m string) string {
		sub := authorization.FindStringSubmatch(m)
		return sub[1] + Marker
	})
	s = bearer.ReplaceAllString(s, "${1}${2}"+Marker)
	s = secretPair.ReplaceAllString(s, "${1}"+Marker)
	s = skKey.ReplaceAllString(s, Marker)
	return s
}

// All is Text of each string, in a new slice (nil for nil): a summary's
// notes, a run's targets.
func All(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}

// minKnown is the shortest known secret Known replaces verbatim: a shorter
// one (a placeholder key such as "x") would blank ordinary letters of the
// message and is no secret worth that.
const minKnown = 4

// Known is Text with the secrets the caller knows (the configured API key)
// replaced verbatim first, wherever they appear, when at least 4 bytes long.
func Known(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= minKnown {
			s = strings.ReplaceAll(s, k, Marker)
		}
	}
	return Text(s)
}

// URL removes the secrets of one URL: the password of its userinfo, a
// userinfo without a password (https://TOKEN@host: a token, however short),
// and the value of every query parameter become Marker (the names stay, so
// a reader still sees which parameters were sent). A string that does not
// parse as a URL is redacted as text.
func URL(raw string) string {
	if raw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return urlText(raw)
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Marker)
			changed = true
		} else if name := u.User.Username(); name != "" && name != Marker {
			// A userinfo of one part is how a token rides in a URL.
			u.User = url.User(Marker)
			changed = true
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" && v != Marker {
				parts[i] = k + "=" + Marker
				changed = true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return raw
	}
	return u.String()
}

// urlText redacts a URL that url.Parse refused.
func urlText(s string) string {
	s = userinfoPassword.ReplaceAllString(s, "${1}:"+Marker+"@")
	return queryValue.ReplaceAllString(s, "${1}"+Marker)
}

// Argv redacts a command line before it is written or printed (engine.log,
// the launch line): the value of a flag whose name says it holds a secret
// (--api-key X, --hf-token=X) becomes Marker, and every argument then goes
// through Text (a URL with a password, an sk- key as a positional argument).
func Argv(argv []string) []string {
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		switch {
		case hideNext && !strings.HasPrefix(a, "-"):
			out[i] = Marker
			hideNext = false
			continue
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(a, "=")
			secret := secretFlag(name)
			hideNext = secret && !hasValue
			if secret && hasValue {
				out[i] = name + "=" + Marker
				continue
			}
		default:
			hideNext = false
		}
		out[i] = Text(a)
	}
	return out
}

// Secrets are the values a command line and an environment hand a process
// as secrets — a secret flag's value (--api-key X, --hf-token=X) and a
// secret-named variable's (HF_TOKEN=X, OPENAI_API_KEY=X) — for Known to
// replace verbatim wherever the process echoes them: an engine that logs
// its arguments prints them in its own syntax (vLLM: "non-default args:
// {'api_key': ['X']}"), which no pattern can foresee.
func Secrets(argv, env []string) []string {
	var out []string
	hideNext := false
	for _, a := range argv {
		switch {
		case hideNext && !strings.HasPrefix(a, "-"):
			out = append(out, a)
			hideNext = false
		case strings.HasPrefix(a, "-"):
			name, value, hasValue := strings.Cut(a, "=")
			secret := secretFlag(name)
			hideNext = secret && !hasValue
			if secret && hasValue && value != "" {
				out = append(out, value)
			}
		default:
			hideNext = false
		}
	}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok && secretFlag(name) && !setting(value) {
			out = append(out, value)
		}
	}
	return out
}

// setting: a value that is a switch or a number (HF_HUB_DISABLE_TOKEN=1,
// USE_AUTH_TOKEN=false), not a secret; replacing it verbatim would blank
// every "false" in a log.
func setting(v string) bool {
	switch strings.ToLower(v) {
	case "", "0", "1", "true", "false", "yes", "no", "on", "off", "none", "null":
		return true
	}
	return strings.Trim(v, "0123456789.") == ""
}

// SecretHeader reports whether an HTTP header's name says its value is a
// credential (Authorization, Cookie, X-Api-Key, X-Auth-Token, …): such a
// value is never written anywhere, even as the scenario gave it.
func SecretHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return secretFlag(name)
}

// secretFlag: a flag with a word key, token, secret, password or passwd in
// its name (--api-key, --hf-token, --client-secret), not
// --max-num-batched-tokens or --tokenizer.
func secretFlag(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' })
	for _, w := range words {
		switch w {
		case "key", "apikey", "token", "secret", "password", "passwd":
			return true
		}
	}
	return false
}

// Printable makes text from outside (a model id, an error message, a
// scenario's description) safe to print on a terminal: C0 and C1 control
// characters (ESC, BEL, CSI, ...) and DEL are shown escaped as \x1b, \u009b
// and the like, so no escape sequence reaches the terminal; invalid UTF-8
// bytes are escaped too. Newlines and tabs are kept: callers that need one
// line fold them (PrintableLine).
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case isControl(r):
			if r < 0x80 {
				b.WriteString(`\x` + hex2(byte(r)))
			} else {
				b.WriteString(`\u` + hex2(byte(r>>8)) + hex2(byte(r)))
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// PrintableLine is Printable with newlines and tabs escaped too, for text
// that must stay on one line.
func PrintableLine(s string) string {
	s = Printable(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		// bidirectional overrides and isolates reorder what a reader sees
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

func isPrintable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return isControl(r) && r != '\n' && r != '\t'
	})
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// PrintableWriter passes everything written to w through Printable, so
// text from outside cannot carry escape sequences to a terminal. Renderers
// that write no control characters of their own (everything but tabs and
// newlines) use it around their writer.
func PrintableWriter(w io.Writer) io.Writer { return printableWriter{w} }

type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	s := string(b)
	if isPrintable(s) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, Printable(s)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// SafeWriter is for what a run prints about itself (engine notes, errors,
// progress lines): everything written passes through Text and Printable,
// so neither a secret nor a terminal escape sequence from outside reaches
// the screen.
func SafeWriter(w io.Writer) io.Writer { return safeWriter{w} }

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(s.w, Printable(Text(string(b)))); err != nil {
		return 0, err
	}
	return len(b), nil
}
