package scenarios

import (
	"strings"
	"testing"
)

// TestSessionHeader: an agentic trace may name a session-affinity header; it
// must be a header name the client does not set itself, and only for the
// agentic formats.
func TestSessionHeader(t *testing.T) {
	t.Parallel()
	trace := func(format, header string) string {
		return head + "workload:\n  trace: {format: " + format + ", path: lengths.csv, session_header: '" + header + "'}\n"
	}
	for _, tc := range []struct{ yaml, want string }{
		{trace("weka", "x-session-affinity"), ""},
		{trace("copilot", "X-Route-Key"), ""},
		{trace("mooncake", "x-a"), "workload.trace.session_header: only for the agentic formats (weka, copilot)"},
		{trace("weka", "bad header"), `workload.trace.session_header: want a header name (letters, digits and !#$%&'*+-.^_` + "`" + `|~), got "bad header"`},
		{trace("copilot", "Authorization"), `workload.trace.session_header: "Authorization" is a header the client sets itself`},
		{trace("weka", ""), `workload.trace.session_header: want a header name`},
	} {
		s, err := parseIn("f.yaml", []byte(tc.yaml), noEnv)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.yaml, err)
		case tc.want == "" && (s.Workload.Trace.SessionHeader == "" || !AgenticTrace(s.Workload.Trace.Format)):
			t.Errorf("%s: read as %+v", tc.yaml, s.Workload.Trace)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s:\n got %v\nwant …%s…", tc.yaml, err, tc.want)
		}
	}
}
