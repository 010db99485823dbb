package report

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// Redacted replaces a secret wherever report writes or prints one.
const Redacted = "REDACTED"

var (
	// A URL with a scheme, up to the first character that cannot be part
	// of it in running text (quotes, brackets, space).
	urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>()\[\]{}]+`)
	// userinfo with a password that url.Parse could not take apart.
	userinfoPassword = regexp.MustCompile(`(://[^/?#@\s:]*):[^/?#@\s]*@`)
	// A query parameter's value, in a URL or a bare path ("/metrics?token=x").
	queryValue = regexp.MustCompile(`([?&][^=&?#\s"']+=)[^&#\s"']+`)
	// key=value or key: value pairs whose key names a secret, in free text.
	secretPair = regexp.MustCompile(`(?i)\b((?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|key)["']?\s*[:=]\s*["']?)([^\s"'&,;}]+)`)
	// An Authorization header's credential, whatever its scheme, and a
	// bearer token anywhere.
	authorization = regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|apikey)\s+)?[^\s"',;)\]}]+`)
	bearer        = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]+`)
	// OpenAI-shaped keys (sk-..., sk-proj-...), and other prefixed API keys.
	skKey = regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}`)
)

// Redact removes secrets from s, for everything report writes or prints:
// the passwords of URLs' userinfo (user:pass@host), the values of query
// parameters (?token=..., &key=...), the values of key=value pairs that
// name a secret (api_key=..., password: ...), bearer and basic credentials
// ("Authorization: Bearer ...") and sk-... keys each become REDACTED.
// It is idempotent: Redact(Redact(s)) == Redact(s).
func Redact(s string) string {
	if s == "" {
		return s
	}
	s = urlInText.ReplaceAllStringFunc(s, RedactURL)
	s = userinfoPassword.ReplaceAllString(s, "${1}:"+Redacted+"@")
	s = queryValue.ReplaceAllString(s, "${1}"+Redacted)
	s = authorization.ReplaceAllStringFunc(s, func(m string) string {
		sub := authorization.FindStringSubmatch(m)
		return sub[1] + Redacted
	})
	s = bearer.ReplaceAllString(s, "${1}${2}"+Redacted)
	s = secretPair.ReplaceAllString(s, "${1}"+Redacted)
	s = skKey.ReplaceAllString(s, Redacted)
	return s
}

// RedactURL removes the secrets of one URL: the password of its userinfo
// and the value of every query parameter become REDACTED (the names stay,
// so a reader still sees which parameters were sent). A string that does
// not parse as a URL is redacted as text.
func RedactURL(raw string) string {
	if raw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return redactURLText(raw)
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
			changed = true
		} else if skKey.MatchString(u.User.Username()) || len(u.User.Username()) >= 20 {
			// A token alone in the userinfo (https://TOKEN@host) is a secret too.
			u.User = url.User(Redacted)
			changed = true
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" && v != Redacted {
				parts[i] = k + "=" + Redacted
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

// redactURLText redacts a URL that url.Parse refused.
func redactURLText(s string) string {
	s = userinfoPassword.ReplaceAllString(s, "${1}:"+Redacted+"@")
	return queryValue.ReplaceAllString(s, "${1}"+Redacted)
}

// RedactRecord removes secrets from a record's free text (its error
// message) in place.
func RedactRecord(r *client.Record) {
	r.Error = Redact(r.Error)
}

// RedactRow removes secrets from a scrape row's target and error in place.
func RedactRow(r *scrape.Row) {
	r.Target = RedactURL(r.Target)
	r.Error = Redact(r.Error)
}

// RedactMeta removes secrets from a run's metadata: the engine's URLs and
// notes, the description, the prompt calibration note, the stop reason and
// the boundary scrapes. It sets m's fields to new values and never writes
// through to slices or rows it shares with a caller.
func RedactMeta(m *RunMeta) {
	m.Engine.BaseURL = RedactURL(m.Engine.BaseURL)
	m.Engine.MetricsURL = RedactURL(m.Engine.MetricsURL)
	m.Engine.Notes = redactAll(m.Engine.Notes)
	m.Description = Redact(m.Description)
	m.PromptCalibration = Redact(m.PromptCalibration)
	m.Stopped = Redact(m.Stopped)
	// New phases and rows: the caller's stay as they were.
	m.Phases = slices.Clone(m.Phases)
	for i := range m.Phases {
		ph := &m.Phases[i]
		ph.Before, ph.After = redactedRow(ph.Before), redactedRow(ph.After)
		ph.BeforeRows = redactRows(ph.BeforeRows)
		ph.AfterRows = redactRows(ph.AfterRows)
	}
}

func redactedRow(r *scrape.Row) *scrape.Row {
	if r == nil {
		return nil
	}
	c := *r
	RedactRow(&c)
	return &c
}

func redactAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Redact(s)
	}
	return out
}

func redactRows(rows []scrape.Row) []scrape.Row {
	if rows == nil {
		return nil
	}
	out := slices.Clone(rows)
	for i := range out {
		RedactRow(&out[i])
	}
	return out
}

// redactSummary removes secrets from everything in s that came from outside
// as text: a last pass after Compute, so no derived string escapes it.
func redactSummary(s *Summary) {
	s.Run.Description = Redact(s.Run.Description)
	s.Run.Stopped = Redact(s.Run.Stopped)
	s.Engine.BaseURL = RedactURL(s.Engine.BaseURL)
	s.Engine.MetricsURL = RedactURL(s.Engine.MetricsURL)
	s.Engine.Notes = redactAll(s.Engine.Notes)
	s.Health.Problems = redactAll(s.Health.Problems)
	s.Client.Tokens.PromptCalibration = Redact(s.Client.Tokens.PromptCalibration)
	redactClient(&s.Client)
	for i := range s.Phases {
		redactClient(&s.Phases[i].Client)
		redactServer(s.Phases[i].Server)
	}
	redactServer(s.Server)
	for i := range s.Findings {
		s.Findings[i].Verdict = Redact(s.Findings[i].Verdict)
	}
	if sw := s.Sweep; sw != nil {
		sw.Saturation.Reason = Redact(sw.Saturation.Reason)
	}
}

func redactClient(c *ClientSide) {
	for k, v := range c.Requests.ErrorSamples {
		c.Requests.ErrorSamples[k] = Redact(v)
	}
}

func redactServer(s *ServerSide) {
	if s == nil {
		return
	}
	for i, t := range s.Targets {
		s.Targets[i] = RedactURL(t)
	}
	s.Notes = redactAll(s.Notes)
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
