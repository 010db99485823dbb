package client

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxErrorMessage bounds the server's words kept in a Record's Error.
const maxErrorMessage = 500

// errorMessage is what a server said in an error body or event, in
// whatever shape engines and gateways send it: OpenAI's {"error":
// {"message", "type", "code"}}, {"error": "…"} (TGI), {"message": …} and
// {"object":"error","message":…} (vLLM), {"detail": "…"} or FastAPI's
// validation list {"detail": [{"msg": …}]}, any of them indented or
// behind an SSE "data:" prefix; else the text itself, an HTML page reduced
// to its text. Whatever it is, the message is made one printable line (no
// control character, so no terminal escape) of at most maxErrorMessage
// bytes; Do redacts it. It runs once per failed request.
func errorMessage(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	msg := jsonErrorMessage(raw)
	if msg == "" {
		if i, j := bytes.IndexByte(raw, '{'), bytes.LastIndexByte(raw, '}'); i > 0 && j > i {
			msg = jsonErrorMessage(raw[i : j+1]) // "data: {…}", "event: error\ndata: {…}"
		}
	}
	if msg == "" {
		msg = string(raw)
		if looksHTML(raw) {
			msg = htmlText(msg)
		}
	}
	return printableLine(msg, maxErrorMessage)
}

// jsonErrorMessage is the message of a JSON error body, "" when raw is
// not one.
func jsonErrorMessage(raw []byte) string {
	if m := errorValue(raw); m != "" {
		return m
	}
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return ""
	}
	for _, r := range []json.RawMessage{top.Error, top.Message, top.Detail} {
		if m := errorValue(r); m != "" {
			return m
		}
	}
	return detailList(top.Detail)
}

// errorValue reads one error value: a string, or an object with a message
// (and maybe a type and code). It returns "" for anything else.
func errorValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Message == "" {
		return ""
	}
	var tags []string
	if obj.Type != "" {
		tags = append(tags, "type "+obj.Type)
	}
	if c := string(obj.Code); c != "" && c != "null" {
		tags = append(tags, "code "+strings.Trim(c, `"`))
	}
	if len(tags) == 0 {
		return obj.Message
	}
	return obj.Message + " (" + strings.Join(tags, ", ") + ")"
}

// detailList reads FastAPI's validation errors, [{"loc": […], "msg": "…"}]:
// their messages, joined.
func detailList(raw json.RawMessage) string {
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var msgs []string
	for _, d := range list {
		if d.Msg == "" {
			continue
		}
		m := d.Msg
		if len(d.Loc) > 0 {
			parts := make([]string, len(d.Loc))
			for i, l := range d.Loc {
				b, _ := json.Marshal(l)
				parts[i] = strings.Trim(string(b), `"`)
			}
			m = strings.Join(parts, ".") + ": " + m
		}
		msgs = append(msgs, m)
	}
	return strings.Join(msgs, "; ")
}

// looksHTML reports a body that is an HTML page (a proxy's or gateway's).
func looksHTML(raw []byte) bool {
	head := bytes.ToLower(raw[:min(len(raw), 512)])
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) ||
		bytes.Contains(head, []byte("<body")) || bytes.Contains(head, []byte("<head"))
}

// htmlText is the text of an HTML page: the title and the body's words,
// without tags, scripts or styles, entities decoded.
func htmlText(s string) string {
	var b strings.Builder
	lower := strings.ToLower(s)
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(html.UnescapeString(s[i : i+j]))
			i += j
			continue
		}
		// Skip the tag; a script or style element is skipped whole.
		for _, el := range []string{"script", "style"} {
			if strings.HasPrefix(lower[i:], "<"+el) {
				if end := strings.Index(lower[i:], "</"+el); end >= 0 {
					i += end
				}
			}
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		i += end + 1
		b.WriteByte(' ')
	}
	return b.String()
}

// printableLine makes s one line of printable text at most max bytes long
// (then ending in "…"): invalid UTF-8 becomes U+FFFD, every run of white
// space or control characters (ESC, BEL, C1 controls: terminal escapes)
// one space.
func printableLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
