package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/workload"
)

// fake is an engine of one family serving the shapes the real ones do
// (llama.cpp's from the captures in testdata/llamacpp), with a ChatML-like
// template and a tokenizer whose counts the test knows:
//   - a template marker (<|...|>, <s>) is one token, any other word
//     wordCost tokens;
//   - each message is "<|start|><|ROLE|>\n" CONTENT "<|end|>\n" (3 tokens
//     around the words), the request ends with "<|start|><|assistant|>\n"
//     (2) and starts with BOS (1): 3 per request + 3 per message;
//   - defaultSystem > 0 adds a system message of that many words when the
//     request has none (as Qwen's template does).
type fake struct {
	fakeSpec
	mu    sync.Mutex
	paths []string
}

type fakeSpec struct {
	family        string // llamacpp, vllm, sglang (prompt-only /tokenize), tgi, probe (usage only), none
	wordCost      int
	defaultSystem int
}

func (f *fake) tokens(text string) int {
	text = strings.NewReplacer("<", " <", ">", "> ").Replace(text)
	n := 0
	for _, w := range strings.Fields(text) {
		if strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") {
			n++
		} else {
			n += f.wordCost
		}
	}
	return n
}

// render is the template's text, without BOS (llama.cpp's /apply-template).
func (f *fake) render(msgs []workload.Message) string {
	var b strings.Builder
	if f.defaultSystem > 0 && (len(msgs) == 0 || msgs[0].Role != "system") {
		b.WriteString("<|start|><|system|>\n" + workload.VocabularyText(99, f.defaultSystem) + "<|end|>\n")
	}
	for _, m := range msgs {
		b.WriteString("<|start|><|" + m.Role + "|>\n" + m.Content + "<|end|>\n")
	}
	b.WriteString("<|start|><|assistant|>\n")
	return b.String()
}

// chatCount is what the engine counts for a chat request (BOS + template).
func (f *fake) chatCount(msgs []workload.Message) int { return 1 + f.tokens(f.render(msgs)) }

// completionCount is what it counts for /completions (BOS + the prompt).
func (f *fake) completionCount(prompt string) int { return 1 + f.tokens(prompt) }

func ids(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 3 + i
	}
	return out
}

type body struct {
	Model            string             `json:"model"`
	Content          *string            `json:"content"`
	Prompt           *string            `json:"prompt"`
	Inputs           *string            `json:"inputs"`
	Messages         []workload.Message `json:"messages"`
	AddSpecial       bool               `json:"add_special"`
	AddSpecialTokens *bool              `json:"add_special_tokens"`
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	raw, _ := io.ReadAll(r.Body)
	var b body
	if err := json.Unmarshal(raw, &b); err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch f.family + " " + r.URL.Path {
	case "llamacpp /apply-template":
		if len(b.Messages) == 1 && b.Messages[0].Content == captureText {
			_, _ = w.Write(readCapture("apply-template.json")) // the real bytes
			return
		}
		reply(map[string]any{"prompt": f.render(b.Messages)})
	case "llamacpp /tokenize":
		text := ""
		if b.Content != nil {
			text = *b.Content
		}
		if text == captureText {
			_, _ = w.Write(readCapture("tokenize.json"))
			return
		}
		n := f.tokens(text)
		if b.AddSpecial {
			n++
		}
		if text == "" {
			n = 0
		}
		reply(map[string]any{"tokens": ids(n)})
	case "vllm /tokenize", "sglang /tokenize", "sglang /v1/tokenize":
		var n int
		switch {
		case b.Prompt != nil:
			n = f.tokens(*b.Prompt)
			if b.AddSpecialTokens == nil || *b.AddSpecialTokens {
				n++
			}
		case len(b.Messages) > 0 && f.family == "vllm":
			n = f.chatCount(b.Messages)
		default:
			w.WriteHeader(http.StatusUnprocessableEntity)
			reply(map[string]any{"detail": "prompt: field required"})
			return
		}
		reply(map[string]any{"count": n, "max_model_len": 4096, "tokens": ids(n), "token_strs": nil})
	case "tgi /tokenize":
		if b.Inputs == nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			reply(map[string]any{"error": "missing field `inputs`"})
			return
		}
		reply(tgiTokens(1 + f.tokens(*b.Inputs))) // TGI adds the special tokens
	case "tgi /chat_tokenize":
		reply(map[string]any{"tokenize_response": tgiTokens(f.chatCount(b.Messages)), "templated_text": "<s>" + f.render(b.Messages)})
	case "llamacpp /v1/chat/completions", "vllm /v1/chat/completions", "sglang /v1/chat/completions", "tgi /v1/chat/completions", "probe /v1/chat/completions":
		reply(map[string]any{"object": "chat.completion", "choices": []any{}, "usage": map[string]any{"prompt_tokens": f.chatCount(b.Messages), "completion_tokens": 1}})
	case "probe /v1/completions":
		reply(map[string]any{"object": "text_completion", "choices": []any{}, "usage": map[string]any{"prompt_tokens": f.completionCount(*b.Prompt), "completion_tokens": 1}})
	default:
		http.Error(w, `{"error": "not found"}`, http.StatusNotFound)
	}
}

func tgiTokens(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": 3 + i, "text": "x", "start": i, "stop": i + 1}
	}
	return out
}

const captureText = "the quick brown fox jumps over the lazy dog"

func readCapture(name string) []byte {
	b, err := os.ReadFile("testdata/llamacpp/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

func serve(t *testing.T, f *fake) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestProbeMethods(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fake     fakeSpec
		dialect  string
		endpoint string
		method   string
		template int // per one-message request
		request  int
		message  int
		roles    map[string]int
		perWord  float64
		note     string // a note that must be there
	}{
		{name: "llama.cpp", fake: fakeSpec{family: "llamacpp", wordCost: 1}, dialect: "llamacpp", method: MethodApplyTemplate, template: 6, request: 3, message: 3, perWord: 1},
		{name: "llama.cpp, dialect unknown", fake: fakeSpec{family: "llamacpp", wordCost: 1}, method: MethodApplyTemplate, template: 6, request: 3, message: 3, perWord: 1},
		{name: "vLLM", fake: fakeSpec{family: "vllm", wordCost: 1}, dialect: "vllm", method: MethodTokenize, template: 6, request: 3, message: 3, perWord: 1},
		{name: "vLLM, dialect unknown", fake: fakeSpec{family: "vllm", wordCost: 1}, method: MethodTokenize, template: 6, request: 3, message: 3, perWord: 1,
			note: "apply_template (llama.cpp): not served"},
		{name: "vLLM, default system prompt", fake: fakeSpec{family: "vllm", wordCost: 1, defaultSystem: 10}, dialect: "vllm", method: MethodTokenize,
			template: 6 + 13, request: 16, message: 3, roles: map[string]int{"system": -10}, perWord: 1, note: "a system message adds -10 tokens"},
		{name: "vLLM, two tokens per word", fake: fakeSpec{family: "vllm", wordCost: 2}, dialect: "vllm", method: MethodTokenize, template: 6, request: 3, message: 3, perWord: 2,
			note: "not one token per word"},
		{name: "SGLang without chat tokenize falls back to probes", fake: fakeSpec{family: "sglang", wordCost: 1}, dialect: "sglang", method: MethodProbe,
			template: 6, request: 3, message: 3, perWord: 1, note: "tokenize (vLLM/SGLang): refused"},
		{name: "TGI", fake: fakeSpec{family: "tgi", wordCost: 1}, dialect: "tgi", method: MethodTokenize, template: 6, request: 3, message: 3, perWord: 1,
			note: "the tokenizer adds 1 special tokens"},
		{name: "TGI, dialect unknown", fake: fakeSpec{family: "tgi", wordCost: 1}, method: MethodTokenize, template: 6, request: 3, message: 3, perWord: 1},
		{name: "usage only", fake: fakeSpec{family: "probe", wordCost: 1}, dialect: "fastdeploy", method: MethodProbe, template: 6, request: 3, message: 3, perWord: 1},
		{name: "usage only, two tokens per word", fake: fakeSpec{family: "probe", wordCost: 2}, method: MethodProbe, template: 6, request: 3, message: 3, perWord: 2,
			note: "fitting divides by it"},
		{name: "usage only, completions", fake: fakeSpec{family: "probe", wordCost: 1}, endpoint: EndpointCompletions, method: MethodProbe, template: 1, request: 1, message: 0, perWord: 1},
		{name: "llama.cpp, completions", fake: fakeSpec{family: "llamacpp", wordCost: 1}, endpoint: EndpointCompletions, method: MethodTokenize, template: 1, request: 1, message: 0, perWord: 1},
		{name: "vLLM, completions", fake: fakeSpec{family: "vllm", wordCost: 1}, endpoint: EndpointCompletions, method: MethodTokenize, template: 1, request: 1, message: 0, perWord: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fake{fakeSpec: tt.fake}
			res, err := Probe(context.Background(), Config{BaseURL: serve(t, f), Model: "m", Dialect: tt.dialect, Endpoint: tt.endpoint})
			if err != nil {
				t.Fatalf("Probe: %v\nnotes: %q", err, res.Notes)
			}
			if res.Method != tt.method || res.TemplateTokens != tt.template || res.RequestTokens != tt.request || res.MessageTokens != tt.message ||
				res.TokensPerWord != tt.perWord || !res.MessagesMeasured || !cmp.Equal(res.RoleTokens, tt.roles, cmpEmpty) {
				t.Errorf("got %s\n%+v", res, res)
			}
			if tt.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tt.note) {
				t.Errorf("notes do not say %q:\n%s", tt.note, strings.Join(res.Notes, "\n"))
			}
			if len(res.Evidence) != 4 {
				t.Errorf("evidence: %+v", res.Evidence)
			}
			// The fit reproduces the engine's count of every shape, and of
			// a fitted request.
			fit := res.Fit()
			for _, sh := range shapes() {
				want := f.chatCount(sh.msgs)
				if tt.endpoint == EndpointCompletions {
					want = f.completionCount(joined(sh.msgs))
				}
				words := workload.CountTokens(sh.msgs)
				if got := fit.Overhead(sh.msgs) + int(float64(words)*res.TokensPerWord); got != want {
					t.Errorf("%s: fit says %d tokens, the engine counts %d", sh.name, got, want)
				}
			}
			if tt.endpoint == "" {
				req := workload.Request{PromptTokens: 300, Messages: []workload.Message{
					{Role: "system", Content: workload.VocabularyText(7, 100)}, {Role: "user", Content: workload.VocabularyText(8, 200)}}}
				fitted, rep := workload.FitRequest(req, fit)
				got := f.chatCount(fitted.Messages)
				if got != rep.Expected || rep.Off != 0 && !(tt.perWord == 2 && (rep.Off == 1 || rep.Off == -1)) {
					// At 2 tokens per word an odd overhead leaves 300 one token out of reach.
					t.Errorf("fitted request: the engine counts %d, want 300 (report %+v)", got, rep)
				}
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b map[string]int) bool {
	return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
})

func TestProbeNothingAnswers(t *testing.T) {
	t.Parallel()
	f := &fake{fakeSpec: fakeSpec{family: "none", wordCost: 1}}
	res, err := Probe(context.Background(), Config{BaseURL: serve(t, f), Model: "m"})
	if err == nil || res.Method != MethodNone {
		t.Fatalf("Probe = %+v, %v; want MethodNone and an error", res, err)
	}
	if fit := res.Fit(); !fit.IsZero() {
		t.Errorf("Fit of nothing: %+v", fit)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"/apply-template: 404", "/tokenize: 404", "/chat_tokenize: 404", "/v1/chat/completions: 404"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes do not say %q:\n%s", want, notes)
		}
	}
	if _, err := Probe(context.Background(), Config{}); err == nil {
		t.Error("no BaseURL: want an error")
	}
	if _, err := Probe(context.Background(), Config{BaseURL: "http://x/v1", Endpoint: "nonesuch"}); err == nil || !strings.Contains(err.Error(), "unknown endpoint") {
		t.Errorf("unknown endpoint: %v, want an error naming it unknown", err)
	}
}

// TestLlamaCppCaptures: the real server's bytes parse: /tokenize's 11 ids
// for the fox sentence, /apply-template's ChatML prompt, and the fake's
// ChatML rendering is the real one's shape.
func TestLlamaCppCaptures(t *testing.T) {
	t.Parallel()
	var tmpl struct{ Prompt string }
	if err := json.Unmarshal(readCapture("apply-template.json"), &tmpl); err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>user\n" + captureText + "<|im_end|>\n<|im_start|>assistant\n"; tmpl.Prompt != want {
		t.Fatalf("captured prompt %q", tmpl.Prompt)
	}
	var chat struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal(readCapture("chat-nonstream.json"), &chat); err != nil || chat.Usage.PromptTokens != 39 {
		t.Fatalf("captured usage %+v, %v", chat.Usage, err)
	}

	f := &fake{fakeSpec: fakeSpec{family: "llamacpp", wordCost: 1}}
	base := serve(t, f)
	p := newPoster(Config{})
	root, _ := roots(base)
	n, err := llamaTokenize(context.Background(), p, root+"/tokenize", captureText, false)
	if err != nil || n != 11 {
		t.Fatalf("captured /tokenize: %d tokens, %v; want 11", n, err)
	}
	// Count in chat mode goes through the captured /apply-template answer.
	msgs := [][]workload.Message{{{Role: "user", Content: captureText}}, {{Role: "user", Content: workload.VocabularyText(1, 9)}}}
	got, err := Count(context.Background(), Config{BaseURL: base, Dialect: "llamacpp"}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1 + f.tokens(tmpl.Prompt), f.chatCount(msgs[1])}
	if got.Method != MethodApplyTemplate || !cmp.Equal(got.Tokens, want) {
		t.Errorf("Count = %+v, want apply_template %v", got, want)
	}
	// Completions: the captured ids of the sentence itself.
	got, err = Count(context.Background(), Config{BaseURL: base, Endpoint: EndpointCompletions}, msgs[:1])
	if err != nil || got.Method != MethodTokenize || !cmp.Equal(got.Tokens, []int{11}) {
		t.Errorf("Count completions = %+v, %v; want [11]", got, err)
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	prompts := [][]workload.Message{
		{{Role: "user", Content: "Summarize the plot of Hamlet in two sentences."}},
		{{Role: "system", Content: "You answer in French."}, {Role: "user", Content: "How are you today?"}},
	}
	for _, family := range []string{"llamacpp", "vllm", "tgi"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			f := &fake{fakeSpec: fakeSpec{family: family, wordCost: 1}}
			got, err := Count(context.Background(), Config{BaseURL: serve(t, f), Model: "m"}, prompts)
			if err != nil {
				t.Fatal(err)
			}
			want := []int{f.chatCount(prompts[0]), f.chatCount(prompts[1])}
			if !cmp.Equal(got.Tokens, want) || got.Method == MethodNone {
				t.Errorf("Count = %+v, want %v", got, want)
			}
			for _, p := range f.paths {
				if strings.HasSuffix(p, "/completions") {
					t.Errorf("Count sent a generation request: %s", p)
				}
			}
		})
	}
	t.Run("no tokenizer", func(t *testing.T) {
		t.Parallel()
		for _, family := range []string{"probe", "sglang"} {
			f := &fake{fakeSpec: fakeSpec{family: family, wordCost: 1}}
			got, err := Count(context.Background(), Config{BaseURL: serve(t, f), Model: "m"}, prompts)
			if !errors.Is(err, ErrNoTokenizer) || got.Method != MethodNone || len(got.Tokens) != 0 {
				t.Errorf("%s: Count = %+v, %v; want ErrNoTokenizer", family, got, err)
			}
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		if _, err := Count(context.Background(), Config{BaseURL: "http://127.0.0.1:1/v1"}, make([][]workload.Message, MaxCount+1)); err == nil {
			t.Error("more than MaxCount prompts: want an error")
		}
		if got, err := Count(context.Background(), Config{BaseURL: "http://127.0.0.1:1/v1"}, nil); err != nil || len(got.Tokens) != 0 {
			t.Errorf("no prompts: %+v, %v", got, err)
		}
	})
}

func TestAPIKeyAndCancel(t *testing.T) {
	t.Parallel()
	var auth []string
	var mu sync.Mutex
	f := &fake{fakeSpec: fakeSpec{family: "vllm", wordCost: 1}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if _, err := Probe(context.Background(), Config{BaseURL: srv.URL + "/v1", APIKey: "k", Dialect: "vllm", HTTPClient: srv.Client()}); err != nil {
		t.Fatal(err)
	}
	for _, a := range auth {
		if a != "Bearer k" {
			t.Fatalf("Authorization %q", a)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := Probe(ctx, Config{BaseURL: srv.URL + "/v1"}); !errors.Is(err, context.Canceled) || res.Method != MethodNone {
		t.Errorf("cancelled: %+v, %v", res, err)
	}
}
