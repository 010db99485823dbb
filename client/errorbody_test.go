package client

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// errorShapes are error bodies as engines, frameworks and gateways send
// them, with the words of the message a record must keep.
var errorShapes = []struct {
	name, body, want string
}{
	{"openai", `{"error":{"message":"out of memory","type":"server_error","code":500}}`, "out of memory (type server_error, code 500)"},
	{"openai indented", "{\n  \"error\": {\n    \"message\": \"model is loading\",\n    \"type\": \"unavailable\"\n  }\n}\n", "model is loading (type unavailable)"},
	{"bare message (vLLM)", `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`, "max_tokens is too large (type BadRequestError, code 400)"},
	{"message member only", `{"message":"rate limited","retry":true}`, "rate limited"},
	{"detail string (FastAPI)", `{"detail":"Not Found"}`, "Not Found"},
	{"detail list (FastAPI validation)", `{"detail":[{"loc":["body","messages",0],"msg":"field required","type":"missing"}]}`, "body.messages.0: field required"},
	{"error string (TGI)", `{"error":"Input validation error: inputs tokens + max_new_tokens must be <= 4096","error_type":"validation"}`, "Input validation error: inputs tokens + max_new_tokens must be <= 4096"},
	{"SSE-framed error", "event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n", "overloaded"},
	{"plain text", "upstream connect error or disconnect/reset before headers\n", "upstream connect error or disconnect/reset before headers"},
	{"HTML", "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{color:red}</style></head><body><h1>502 Bad&nbsp;Gateway</h1><script>alert(1)</script><hr>nginx</body></html>", "502 Bad Gateway 502 Bad Gateway nginx"},
	{"terminal escapes", "{\"error\":{\"message\":\"bad \\u001b]0;pwned\\u0007\\u001b[2Jthing\\r\\nnext\"}}", "bad ]0;pwned [2Jthing next"},
	{"raw escapes in text", "oops\x1b[31m red\x07\x9b", "oops [31m red \uFFFD"},
	{"invalid UTF-8", "bad \xff\xfe bytes", "bad \uFFFD bytes"},
}

func TestErrorMessageShapes(t *testing.T) {
	for _, tc := range errorShapes {
		if got := errorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	long := errorMessage([]byte(`{"error":"` + strings.Repeat("é", 1000) + `"}`))
	if len(long) > maxErrorMessage+len("…") || !strings.HasSuffix(long, "…") || !strings.HasPrefix(long, "ééé") {
		t.Errorf("a long message kept %d bytes (%q…), want at most %d and an ellipsis", len(long), long[:10], maxErrorMessage)
	}
}

// TestErrorShapesOnTheWire: each shape as an HTTP error status and as an
// error event mid-stream keeps the server's words, on one printable line.
func TestErrorShapesOnTheWire(t *testing.T) {
	for _, tc := range errorShapes {
		for _, mid := range []bool{false, true} {
			body := strings.TrimSpace(tc.body)
			if mid && (!strings.HasPrefix(body, "{") || strings.Contains(body, "\n")) {
				continue // an error event is one JSON data line
			}
			t.Run(fmt.Sprintf("%s mid-stream=%t", tc.name, mid), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !mid {
						w.WriteHeader(http.StatusServiceUnavailable)
						fmt.Fprint(w, tc.body)
						return
					}
					writeEvents(w, contentEvent("e", "a"), "data: "+body+"\n\n")
				}))
				defer srv.Close()
				rec := newTestClient(t, srv.URL, nil).Do(t.Context(), request("e"))
				if rec.OK() || !strings.Contains(rec.Error, tc.want) {
					t.Errorf("%q %q, want it to keep %q", rec.ErrorClass, rec.Error, tc.want)
				}
				if strings.ContainsAny(rec.Error, "\x1b\x07\u009b\n\r") {
					t.Errorf("control characters in %q", rec.Error)
				}
			})
		}
	}
}
