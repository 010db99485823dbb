package client

import (
	"regexp"
	"strings"
)

// Secrets that a server may echo into an error (a 401 quoting the
// Authorization header it refused, a proxy's debug page) and that must not
// reach a Record, results files and the terminal.
var (
	// bearerToken is the credential after "Bearer" (any case), as in an
	// Authorization header.
	bearerToken = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=:-]+`)
	// skKey is an OpenAI-shaped key: "sk-" then at least 8 key characters
	// (sk-proj-…, sk-ant-… included).
	skKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`)
)

// Redacted replaces a secret in a redacted message.
const Redacted = "[REDACTED]"

// minKeyRedact is the shortest configured API key redacted verbatim
// wherever it appears: a shorter one (a placeholder such as "x") would blank
// ordinary letters of the message and is no secret worth that.
const minKeyRedact = 4

// RedactSecrets returns msg with credentials replaced by Redacted: the token
// after "Bearer", every "sk-"-shaped key, and apiKey itself (the configured
// Config.APIKey, verbatim, when it is at least 4 bytes long). Client.Do
// passes every Record.Error through it.
func RedactSecrets(msg, apiKey string) string {
	if len(apiKey) >= minKeyRedact {
		msg = strings.ReplaceAll(msg, apiKey, Redacted)
	}
	msg = bearerToken.ReplaceAllString(msg, "${1}${2}"+Redacted)
	return skKey.ReplaceAllString(msg, Redacted)
}
