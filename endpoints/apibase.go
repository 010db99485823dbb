package endpoints

import (
	"net/url"
	"strings"
)

// APIBase reads a URL a user gives for an engine: its API root, either the
// server's root (http://host:8000, as vLLM's bench and GuideLLM take it) or
// the OpenAI base (http://host:8000/v1). It reports whether target is one
// (an http(s) URL whose path is empty, "/" or ends in /v1) and returns its
// /v1 base URL, the base every endpoint's path is joined to.
func APIBase(target string) (string, bool) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	switch p := strings.TrimSuffix(u.Path, "/"); {
	case p == "":
		u.Path = APIRoot
	case strings.HasSuffix(p, APIRoot):
		u.Path = p
	default:
		return "", false
	}
	return u.String(), true
}
