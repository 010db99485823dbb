package client

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Replays of bytes a real llama.cpp server sent (testdata/llamacpp, see its
// README): each .http file is a status line, headers and the de-chunked body,
// served event by event with a flush after each, as the server streamed it.

// capture is a recorded response.
type capture struct {
	status int
	header http.Header
	events []string // the body, cut after each blank line
}

// readCapture reads testdata/llamacpp/name: an .http file (status line,
// headers, body) or a bare body (.sse, .json) served as 200.
func readCapture(t *testing.T, name string) capture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "llamacpp", name))
	if err != nil {
		t.Fatal(err)
	}
	c := capture{status: http.StatusOK, header: http.Header{}}
	body := string(raw)
	if strings.HasPrefix(body, "HTTP/1.1 ") {
		head, rest, ok := strings.Cut(body, "\r\n\r\n")
		if !ok {
			t.Fatalf("%s: no end of headers", name)
		}
		lines := strings.Split(head, "\r\n")
		if lines[0] != "HTTP/1.1 200 OK" {
			t.Fatalf("%s: status line %q", name, lines[0])
		}
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, ":")
			// The body is stored de-chunked: Go's server chunks it again.
			if k != "Transfer-Encoding" {
				c.header.Add(k, strings.TrimSpace(v))
			}
		}
		body = rest
	}
	for body != "" {
		i := strings.Index(body, "\n\n")
		if i < 0 {
			c.events = append(c.events, body)
			break
		}
		c.events = append(c.events, body[:i+2])
		body = body[i+2:]
	}
	return c
}

// serveCapture answers every request with the capture.
func (c capture) handler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = bytes.NewBuffer(nil).ReadFrom(r.Body)
		for k, v := range c.header {
			w.Header()[k] = v
		}
		w.WriteHeader(c.status)
		for _, e := range c.events {
			_, _ = w.Write([]byte(e))
			w.(http.Flusher).Flush()
		}
	}
}

func TestLlamaCppReplay(t *testing.T) {
	t.Parallel()
	type summary struct {
		Class                      ErrorClass
		Chunks, Prompt, Output     int
		Cached                     int
		Source                     TokenSource
		PerChunk                   ChunkTokenSource
		Finish, ServerID           string
		NoDone, NoStream           bool
		HasTTFT, HasTTFC, Same     bool
		Timings                    *Timings
		ErrorHas                   string
		Path                       string
		Stream, HasMessages, HasPr bool
	}
	tests := []struct {
		name string
		file string
		edit func(*Config)
		want summary
	}{
		{
			name: "streamed chat",
			file: "chat-stream.http",
			want: summary{Chunks: 12, Prompt: 39, Output: 12, Source: TokensFromUsage, PerChunk: ChunkTokensUsageTotal,
				Finish: "length", ServerID: "chatcmpl-uGLzHA6owIGQTY5Ff2TGl0ay2z7qaY2a", HasTTFT: true, HasTTFC: true, Same: true,
				Timings: &Timings{PromptN: 39, PromptMS: 3.056, PromptPerTokenMS: 0.07835897435897436, PromptPerSecond: 12761.780104712041,
					PredictedN: 12, PredictedMS: 3.937, PredictedPerTokenMS: 0.32808333333333334, PredictedPerSecond: 3048.0060960121923},
				Path: "/v1/chat/completions", Stream: true, HasMessages: true},
		},
		{
			name: "non-streamed chat",
			file: "chat-nonstream.json",
			edit: func(c *Config) { c.NoStream = true },
			want: summary{Prompt: 39, Output: 12, Cached: 38, Source: TokensFromUsage, Finish: "length",
				ServerID: "chatcmpl-4ren2eUInhCZdUhHQXP6PA8H49WzcF5A", NoStream: true,
				Timings: &Timings{CacheN: 38, PromptN: 1, PromptMS: 0.296, PromptPerTokenMS: 0.296, PromptPerSecond: 3378.3783783783783,
					PredictedN: 12, PredictedMS: 2.894, PredictedPerTokenMS: 0.24116666666666667, PredictedPerSecond: 4146.5100207325495},
				Path: "/v1/chat/completions", HasMessages: true},
		},
		{
			name: "streamed completions",
			file: "completions-stream.http",
			edit: func(c *Config) { c.Endpoint = EndpointCompletions },
			want: summary{Chunks: 8, Prompt: 6, Output: 8, Cached: 1, Source: TokensFromUsage, PerChunk: ChunkTokensUsageTotal,
				Finish: "length", ServerID: "chatcmpl-EDX4pdIUXxbgxIIGWpqKNGvC9KClVFPN", HasTTFT: true, HasTTFC: true, Same: true,
				Timings: &Timings{CacheN: 1, PromptN: 5, PromptMS: 0.422, PromptPerTokenMS: 0.0844, PromptPerSecond: 11848.341232227487,
					PredictedN: 8, PredictedMS: 2.293, PredictedPerTokenMS: 0.286625, PredictedPerSecond: 3488.879197557784},
				Path: "/v1/completions", Stream: true, HasPr: true},
		},
		{
			name: "error event after content",
			file: "chat-stream-error-midstream.sse",
			want: summary{Class: ErrStreamBroken, Chunks: 15, Output: 15, Source: TokensFromChunks, PerChunk: ChunkTokensChunks,
				ServerID: "chatcmpl-beaGpxRjCIqgkwL7Z9ZtPBgYTMKZASGd", HasTTFT: true, HasTTFC: true, Same: true,
				ErrorHas: "after 15 output chunks: Failed to parse input at pos 22: casCharacterneg", Path: "/v1/chat/completions",
				Stream: true, HasMessages: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, got := recording(t, readCapture(t, tt.file).handler())
			var path string
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				h(w, r)
			}))
			c := newTestClient(t, srv.URL, func(cfg *Config) {
				cfg.Dialect = "llamacpp"
				if tt.edit != nil {
					tt.edit(cfg)
				}
			})

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, tt.want.Class)
			checkTimeline(t, rec)
			sent := <-got
			_, hasMessages := sent.body["messages"]
			_, hasPrompt := sent.body["prompt"]
			ttft, hasTTFT := rec.TTFT()
			ttfc, hasTTFC := rec.TTFC()
			g := summary{
				Class: rec.ErrorClass, Chunks: len(rec.Chunks), Prompt: rec.PromptTokens, Output: rec.OutputTokens,
				Cached: rec.CachedTokens, Source: rec.TokenSource, PerChunk: rec.TokensPerChunkSource,
				Finish: rec.FinishReason, ServerID: rec.ServerID, NoDone: rec.NoDone, NoStream: rec.NoStream,
				HasTTFT: hasTTFT, HasTTFC: hasTTFC, Same: hasTTFT && ttft == ttfc, Timings: rec.Timings,
				ErrorHas: tt.want.ErrorHas, Path: path, Stream: sent.body["stream"] == true, HasMessages: hasMessages, HasPr: hasPrompt,
			}
			if d := cmp.Diff(tt.want, g); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
			if !strings.Contains(rec.Error, tt.want.ErrorHas) {
				t.Errorf("Error %q does not hold %q", rec.Error, tt.want.ErrorHas)
			}
			if _, ok := sent.body["rid"]; ok {
				t.Error("llamacpp dialect sent an id field")
			}
			for i, ch := range rec.Chunks {
				if ch.Tokens != 1 {
					t.Errorf("chunk %d: %d tokens, want 1", i, ch.Tokens)
				}
			}
			if rec.NoStream && (rec.FirstToken != 0 || rec.End <= rec.SentOnWire()) {
				t.Errorf("non-streamed: first token %v, end %v after send %v", rec.FirstToken, rec.End, rec.SentOnWire())
			}
		})
	}
}

func TestLlamaCppReplayReusesConnection(t *testing.T) {
	t.Parallel()
	// Two replays in a row share one connection: the client reads each body
	// to its end whatever its ending.
	for _, file := range []string{"chat-stream.http", "chat-stream-error-midstream.sse"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			srv, newConns := serveCounting(t, readCapture(t, file).handler())
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Dialect = "llamacpp" })
			first := c.Do(t.Context(), request("r1"))
			second := c.Do(t.Context(), request("r2"))
			if first.ErrorClass != second.ErrorClass || !second.Reused || newConns.Load() != 1 {
				t.Errorf("classes %q %q, second reused %v, %d connections; want one connection", first.ErrorClass, second.ErrorClass, second.Reused, newConns.Load())
			}
		})
	}
}

func TestDoRetriesAfterIdleTimeout(t *testing.T) {
	t.Parallel()
	// llama.cpp closes a connection idle for its keep-alive timeout (5 s).
	// Here the server closes idle connections after 40 ms and requests go
	// out around that instant, so that some find their pooled connection
	// closed under them: none may fail.
	srv := httptest.NewUnstartedServer(readCapture(t, "chat-stream.http").handler())
	srv.Config.IdleTimeout = 40 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Dialect = "llamacpp" })
	retries, reused := 0, 0
	for i := range 12 {
		rec := c.Do(t.Context(), request("r"))
		wantClass(t, rec, ErrNone)
		retries += rec.Retries
		if rec.Reused {
			reused++
		}
		time.Sleep(34*time.Millisecond + time.Duration(i)*time.Millisecond)
	}
	t.Logf("%d retries, %d requests on a reused connection", retries, reused)
}
