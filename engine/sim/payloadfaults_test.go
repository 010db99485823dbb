package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestPayloadFaultsValidate(t *testing.T) {
	for _, tc := range []struct {
		p    PayloadFaults
		want string // "" = valid
	}{
		{PayloadFaults{}, ""},
		{PayloadFaults{ContentParts: 1, ErrorShape: "html", UsageClaim: UsageClaim{ClaimBackwards, 0.5},
			ChunksAfterFinish: ChunksAfterFinish{3, 1}, Choices: 64}, ""},
		{PayloadFaults{ContentParts: 1.5}, "content_parts must be in [0, 1]"},
		{PayloadFaults{ErrorShape: "xml"}, `error_shape "xml"`},
		{PayloadFaults{UsageClaim: UsageClaim{Rate: 0.5}}, "kind is empty"},
		{PayloadFaults{UsageClaim: UsageClaim{Kind: "big", Rate: 0.5}}, `usage_claim.kind "big"`},
		{PayloadFaults{UsageClaim: UsageClaim{Kind: ClaimHuge, Rate: -1}}, "usage_claim.rate must be in [0, 1]"},
		{PayloadFaults{ChunksAfterFinish: ChunksAfterFinish{Rate: 1}}, "count is 0"},
		{PayloadFaults{ChunksAfterFinish: ChunksAfterFinish{Count: 1001, Rate: 1}}, "count must be in [0, 1000]"},
		{PayloadFaults{Choices: 1}, "choices must be 0 (off) or in [2, 64]"},
		{PayloadFaults{Choices: 65}, "choices must be 0 (off) or in [2, 64]"},
	} {
		err := Faults{Payload: tc.p}.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
}

// wireChunk is the part of a chunk these tests read, content kept raw.
type wireChunk struct {
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			Content json.RawMessage `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

func chunksOf(t *testing.T, rs rawStream) []wireChunk {
	t.Helper()
	var out []wireChunk
	for _, l := range rs.lines {
		var c wireChunk
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("chunk %s: %v", l, err)
		}
		out = append(out, c)
	}
	return out
}

func TestPayloadFaultsOnTheWire(t *testing.T) {
	t.Parallel()
	t.Run("content parts", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{Payload: PayloadFaults{ContentParts: 1}})
		rs := readRaw(t, url, "parts-1", nil)
		parts := 0
		for _, c := range chunksOf(t, rs) {
			for _, ch := range c.Choices {
				if raw := ch.Delta.Content; len(raw) > 0 && raw[0] == '[' {
					var p []contentPart
					if json.Unmarshal(raw, &p) != nil || len(p) != 1 || p[0].Type != "text" || p[0].Text == "" {
						t.Errorf("content %s: want one text part", raw)
					}
					parts++
				}
			}
		}
		tr := truthOf(t, e, "parts-1")
		if parts != len(tr.ChunkTokens) || !slices.Contains(tr.Faults, FaultContentParts) || tr.Outcome != OutcomeOK {
			t.Errorf("%d parts chunks for truth %+v", parts, tr)
		}
	})
	t.Run("usage claims", func(t *testing.T) {
		t.Parallel()
		for _, kind := range []string{ClaimHuge, ClaimNegative, ClaimBackwards} {
			e, url := faultEngine(t, Faults{Payload: PayloadFaults{UsageClaim: UsageClaim{kind, 1}}})
			rs := readRaw(t, url, "claim-"+kind, map[string]any{"stream_options": nil})
			var running, final []int64
			for _, c := range chunksOf(t, rs) {
				switch {
				case c.Usage == nil:
				case len(c.Choices) > 0:
					running = append(running, c.Usage.CompletionTokens)
				default:
					final = append(final, c.Usage.CompletionTokens)
				}
			}
			tr := truthOf(t, e, "claim-"+kind)
			if tr.UsageClaim != kind || !slices.Contains(tr.Faults, FaultUsageClaim) || tr.OutputTokens != 10 || len(final) != 1 {
				t.Fatalf("%s: truth %+v, final usages %v (a usage chunk is sent though the request asked for none)", kind, tr, final)
			}
			switch kind {
			case ClaimHuge:
				if final[0] != HugeClaim {
					t.Errorf("huge: completion_tokens %d", final[0])
				}
			case ClaimNegative:
				if final[0] >= 0 {
					t.Errorf("negative: completion_tokens %d", final[0])
				}
			case ClaimBackwards:
				if len(running) == 0 || final[0] >= running[len(running)-1] {
					t.Errorf("backwards: running %v then %d", running, final[0])
				}
			}
		}
	})
	t.Run("chunks after the finish", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{Payload: PayloadFaults{ChunksAfterFinish: ChunksAfterFinish{Count: 3, Rate: 1}}})
		rs := readRaw(t, url, "late-1", nil)
		finished, late := false, 0
		for _, c := range chunksOf(t, rs) {
			for _, ch := range c.Choices {
				if finished && len(ch.Delta.Content) > 2 {
					late++
				}
				finished = finished || ch.FinishReason != ""
			}
		}
		tr := truthOf(t, e, "late-1")
		if late != 3 || tr.ChunksAfterFinish != 3 || tr.OutputTokens != 10 || !rs.done {
			t.Errorf("%d chunks after the finish; truth %+v", late, tr)
		}
	})
	t.Run("choices", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{Payload: PayloadFaults{Choices: 3}})
		rs := readRaw(t, url, "n-1", map[string]any{"n": 3})
		perChoice := map[int]int{}
		finishes := map[int]bool{}
		var final int64
		for _, c := range chunksOf(t, rs) {
			for _, ch := range c.Choices {
				if len(ch.Delta.Content) > 2 {
					perChoice[ch.Index]++
				}
				if ch.FinishReason != "" {
					finishes[ch.Index] = true
				}
			}
			if c.Usage != nil && len(c.Choices) == 0 {
				final = c.Usage.CompletionTokens
			}
		}
		tr := truthOf(t, e, "n-1")
		if len(perChoice) != 3 || len(finishes) != 3 || tr.Choices != 3 || tr.OutputTokens != 30 || final != 30 {
			t.Errorf("chunks per choice %v, finishes %v, usage %d; truth %+v", perChoice, finishes, final, tr)
		}
		for i, n := range perChoice {
			if n != len(tr.ChunkTokens) {
				t.Errorf("choice %d: %d chunks, truth %d each", i, n, len(tr.ChunkTokens))
			}
		}
		// Any n is accepted then; beyond 64 is not.
		if rs := readRaw(t, url, "n-65", map[string]any{"n": 65}); rs.status != http.StatusBadRequest {
			t.Errorf("n 65: status %d", rs.status)
		}
	})
	t.Run("whole responses with choices and parts", func(t *testing.T) {
		t.Parallel()
		e, url := faultEngine(t, Faults{Payload: PayloadFaults{Choices: 2, ContentParts: 1}})
		rs := readWhole(t, url, "whole-1", map[string]any{"stream": false, "stream_options": nil, "n": 2})
		var resp struct {
			Choices []struct {
				Index   int `json:"index"`
				Message struct {
					Content []contentPart `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		body := rs.body
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		tr := truthOf(t, e, "whole-1")
		if len(resp.Choices) != 2 || resp.Choices[1].Index != 1 || len(resp.Choices[0].Message.Content) != 1 ||
			resp.Usage.CompletionTokens != 20 || tr.OutputTokens != 20 || tr.Choices != 2 {
			t.Errorf("%s; truth %+v", body, tr)
		}
	})
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	for _, shape := range append([]string{""}, ErrorShapes()...) {
		t.Run("status "+shape, func(t *testing.T) {
			t.Parallel()
			e, url := faultEngine(t, Faults{ErrorRate: 1, ErrorStatuses: []int{503}, Payload: PayloadFaults{ErrorShape: shape}})
			rs := readRaw(t, url, "shape-1", nil)
			tr := truthOf(t, e, "shape-1")
			if rs.status != 503 || tr.ErrorShape != shape || !strings.Contains(string(rs.body), tr.Error) {
				t.Errorf("status %d, body %q; truth %+v", rs.status, rs.body, tr)
			}
			isJSON := json.Valid(rs.body)
			if wantJSON := shape != "text" && shape != "html"; isJSON != wantJSON {
				t.Errorf("body %q: JSON %t", rs.body, isJSON)
			}
			if shape == "indented" && bytes.Count(rs.body, []byte("\n")) < 4 {
				t.Errorf("indented body on %d lines", bytes.Count(rs.body, []byte("\n")))
			}
		})
		t.Run("event "+shape, func(t *testing.T) {
			t.Parallel()
			e, url := faultEngine(t, Faults{StreamErrorRate: 1, AfterTokens: 2, Payload: PayloadFaults{ErrorShape: shape}})
			rs := readRaw(t, url, "shape-2", nil)
			tr := truthOf(t, e, "shape-2")
			last := rs.lines[len(rs.lines)-1]
			if tr.ErrorShape != shape || !strings.Contains(last, tr.Error) || rs.done {
				t.Errorf("last data line %q; truth %+v", last, tr)
			}
		})
	}
}

// readWhole posts a chat request like readRaw and keeps the whole body.
func readWhole(t *testing.T, url, id string, extra map[string]any) rawStream {
	t.Helper()
	fields := map[string]any{"messages": []map[string]any{{"role": "user", "content": "a b c d"}},
		"max_tokens": 10, "ignore_eos": true, "rid": id}
	for k, v := range extra {
		fields[k] = v
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/chat/completions", bytes.NewReader(chatBody(fields)))
	resp, err := newClient().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawStream{status: resp.StatusCode, header: resp.Header, body: body}
}
