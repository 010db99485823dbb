package endpoints

import (
	"net/url"
	"strings"
)

// URL is the URL of path (such as "/chat/completions" or "/models") under
// the API root base, keeping base's query: a base_url with a query string
// (Azure's ?api-version=…) sends it with every request, where appending the
// path to the string would have put the path inside the query. A base that
// does not parse is joined as text, and the request that follows reports
// it.
func URL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil || (u.RawQuery == "" && u.Fragment == "") {
		return strings.TrimRight(base, "/") + path
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// ServerRoot is the server's root under the API root base (…/v1 less its
// /v1), with base's query kept, for the engine APIs served beside the
// OpenAI ones (/tokenize, /props).
func ServerRoot(base string) string {
	u, err := url.Parse(base)
	if err != nil || (u.RawQuery == "" && u.Fragment == "") {
		return strings.TrimSuffix(strings.TrimRight(base, "/"), APIRoot)
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), APIRoot)
	u.RawPath = ""
	return u.String()
}
