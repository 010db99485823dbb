//go:build unix

package main

// The per-record modes (issue 19): what `llmbench run` costs per finished
// request, measured against plain Go loops in the same run.
//
//   - perrecord: a non-streamed closed loop against a trivial loopback server
//     (this binary, -serve-trivial, pinned to -server-cpu). Loop "llmbench" is
//     `llmbench run` itself (-llmbench) on an external-engine scenario, so the
//     figure is what a user gets: the client, the recorder's file and live
//     window, the live reconciliation and the progress lines; -binaries
//     names other llmbench binaries (base=PATH: built from the commit
//     before), each run the same way as the loop of its name; "plain" is a
//     net/http loop in a child of this binary. Each runs
//     on -client-cpu with GOMAXPROCS=1, one after another, for -window; the
//     requests finished in every -bucket are printed, so a rate that falls
//     over the run shows.
//   - firsttoken: -streams concurrent streams against `llmbench serve`
//     (pinned to -server-cpu); llmbench's first-token lag (its records'
//     first token − sent, from `llmbench run`) against a plain go-openai
//     streaming loop's (first content Recv − the call), p50/p99.
//
//	go build -o /tmp/llmbench ./cmd/llmbench
//	go build -o /tmp/streambench ./client/internal/streambench
//	/tmp/streambench -mode perrecord -llmbench /tmp/llmbench -binaries base=/tmp/llmbench-base \
//	    -loops base,llmbench,plain -concurrency 64 -window 60s -rounds 2
//	/tmp/streambench -mode firsttoken -llmbench /tmp/llmbench -binaries base=/tmp/llmbench-base \
//	    -loops base,llmbench,goopenai -streams 1024 -rate 10 -max-tokens 20 -window 30s -rounds 2

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmbench-org/llmbench/client"
)

// trivialReply is the whole non-streamed answer of the trivial server: a
// chat completion with usage, as an engine sends it.
const trivialReply = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"llmbench-sim",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"ok ok ok ok ok ok ok ok"},"finish_reason":"length"}],` +
	`"usage":{"prompt_tokens":8,"completion_tokens":8,"total_tokens":16}}`

// serveTrivial answers every chat completion with trivialReply (and /models
// with an empty list), reading the request body whole first, until killed.
func serveTrivial() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	reply := []byte(trivialReply)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		_, _ = w.Write(reply)
	})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"llmbench-sim","object":"model"}]}`)
	})
	fmt.Printf("listening on http://%s/v1\n", ln.Addr())
	return http.Serve(ln, mux)
}

// pinned is cmd's argv run on cpu (taskset), or as it is when cpu is "".
func pinned(cpu, name string, args ...string) *exec.Cmd {
	if cpu == "" {
		return exec.Command(name, args...)
	}
	return exec.Command("taskset", append([]string{"-c", cpu, name}, args...)...)
}

// startTrivial starts this binary's trivial server on o.serverCPU and
// returns its base URL.
func startTrivial(o options) (*exec.Cmd, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := pinned(o.serverCPU, exe, "-serve-trivial")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	return startListening(cmd, "the trivial server")
}

// startListening starts cmd and waits for its "listening on URL" line.
func startListening(cmd *exec.Cmd, what string) (*exec.Cmd, string, error) {
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", what, err)
	}
	br := bufio.NewReader(out)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, "", fmt.Errorf("%s did not say where it listens: %w", what, err)
		}
		if rest, ok := strings.CutPrefix(line, "listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, br) }()
			return cmd, strings.Fields(rest)[0], nil
		}
	}
}

// loopResult is what one per-record loop measured.
type loopResult struct {
	Loop    string    `json:"loop"`
	Buckets []int64   `json:"buckets"` // requests finished in each bucket from the first send
	Failed  int64     `json:"failed"`
	FirstNs []int64   `json:"first_ns,omitempty"` // firsttoken: first-token lag of every request sent after the warm-up
	Load    [3]string `json:"-"`                  // /proc/loadavg when the loop ended
}

// runPerRecord runs the perrecord or firsttoken comparison, -rounds times.
func runPerRecord(o options) error {
	var (
		srv  *exec.Cmd
		base string
		err  error
	)
	switch {
	case o.target != "":
		base = o.target
	case o.mode == "perrecord":
		srv, base, err = startTrivial(o)
	default:
		srv, base, err = startEngine(o)
	}
	if err != nil {
		return err
	}
	if srv != nil {
		// The trivial server has nothing to finish, and an interrupt may be
		// ignored (a background job inherits SIGINT ignored): it is killed.
		stop := func() { _ = srv.Process.Signal(os.Interrupt) }
		if o.mode == "perrecord" {
			stop = func() { _ = srv.Process.Kill() }
		}
		defer func() { stop(); _ = srv.Wait() }()
	}
	fmt.Printf("streambench mode=%s concurrency=%d window=%s bucket=%s client_cpu=%q server_cpu=%q engine=%s\n",
		o.mode, o.concurrency(), o.window, o.bucket, o.clientCPU, o.serverCPU, base)
	all := map[string][]loopResult{}
	var order []string
	for round := range o.rounds {
		for _, loop := range strings.Split(o.loops, ",") {
			r, err := perRecordLoop(o, loop, base)
			if err != nil {
				return fmt.Errorf("loop %s: %w", loop, err)
			}
			if _, ok := all[loop]; !ok {
				order = append(order, loop)
			}
			all[loop] = append(all[loop], r)
			printLoop(o, round+1, r)
		}
	}
	printPerRecordRatios(o, order, all)
	return nil
}

func (o options) concurrency() int {
	if o.mode == "firsttoken" {
		return o.streams
	}
	return o.conc
}

// perRecordLoop runs one loop to its end and returns what it measured.
func perRecordLoop(o options, loop, base string) (loopResult, error) {
	var r loopResult
	var err error
	bin := o.llmbench
	for _, nb := range strings.Split(o.binaries, ",") {
		if name, path, ok := strings.Cut(nb, "="); ok && name == loop {
			bin = path
		}
	}
	switch {
	case loop == "llmbench" || bin != o.llmbench:
		r, err = llmbenchRun(o, bin, base)
	default:
		r, err = goChild(o, loop, base)
	}
	r.Loop = loop
	if b, e := os.ReadFile("/proc/loadavg"); e == nil {
		copy(r.Load[:], strings.Fields(string(b)))
	}
	return r, err
}

// llmbenchRun runs `llmbench run` (bin) on a closed-loop scenario against
// base, on the client CPU with GOMAXPROCS=1, and reads its requests.jsonl.
func llmbenchRun(o options, bin, base string) (loopResult, error) {
	dir, err := os.MkdirTemp("", "perrecord")
	if err != nil {
		return loopResult{}, err
	}
	defer os.RemoveAll(dir)
	stream, metrics := "false", ""
	if o.mode == "firsttoken" {
		stream = "true"
		metrics = ", metrics_url: " + strconv.Quote(strings.TrimSuffix(base, "/v1")+"/metrics")
	}
	scenario := fmt.Sprintf(`name: perrecord
model: %s
engine: {kind: external, base_url: %q%s}
request: {stream: %s}
workload: {concurrency: %d, duration: %s, prompt_tokens: 8, output_tokens: %d, timeout: 60s}
`, model, base, metrics, stream, o.concurrency(), o.window, o.maxTokens)
	path := filepath.Join(dir, "perrecord.yaml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		return loopResult{}, err
	}
	cmd := pinned(o.clientCPU, bin, "run", path, "--runs", dir, "--output", "plain")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	log, err := os.Create(filepath.Join(os.TempDir(), "perrecord-"+filepath.Base(bin)+".log"))
	if err != nil {
		return loopResult{}, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return loopResult{}, fmt.Errorf("%s run (output in %s): %w", bin, log.Name(), err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "requests.jsonl"))
	if len(files) != 1 {
		return loopResult{}, fmt.Errorf("want one requests.jsonl under %s, found %d", dir, len(files))
	}
	return readRecords(o, files[0])
}

// readRecords buckets a run's records by their end, from the first send.
func readRecords(o options, path string) (loopResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return loopResult{}, err
	}
	defer f.Close()
	var recs []client.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec client.Record
		if err := client.DecodeRecord(sc.Bytes(), &rec); err != nil {
			return loopResult{}, err
		}
		rec.Chunks = nil
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return loopResult{}, err
	}
	if len(recs) == 0 {
		return loopResult{}, errors.New("no records")
	}
	first := slices.MinFunc(recs, func(a, b client.Record) int { return int(a.Sent - b.Sent) }).Sent
	r := loopResult{Buckets: make([]int64, int(o.window/o.bucket))}
	for _, rec := range recs {
		if !rec.OK() {
			r.Failed++
			continue
		}
		if i := int((rec.End - first) / o.bucket); i < len(r.Buckets) {
			r.Buckets[i]++
		}
		if rec.FirstToken > 0 && rec.Sent-first >= o.warmup {
			r.FirstNs = append(r.FirstNs, int64(rec.FirstToken-rec.Sent))
		}
	}
	return r, nil
}

// goChild runs a Go loop of this binary (plain or goopenai) in a child on
// the client CPU with GOMAXPROCS=1.
func goChild(o options, loop, base string) (loopResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return loopResult{}, err
	}
	cmd := pinned(o.clientCPU, exe, "-loop", loop, "-base", base, "-model", model, "-mode", o.mode,
		"-concurrency", strconv.Itoa(o.conc), "-streams", strconv.Itoa(o.streams), "-max-tokens", strconv.Itoa(o.maxTokens),
		"-warmup", o.warmup.String(), "-window", o.window.String(), "-bucket", o.bucket.String())
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return loopResult{}, err
	}
	var r loopResult
	return r, json.Unmarshal(out, &r)
}

// runGoLoop is a plain or goopenai child: it runs its closed loop for the
// window and prints its loopResult as JSON.
func runGoLoop(loop, base string, o options) error {
	n := o.concurrency()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc, err := rawClient(ctx, base, n)
	if err != nil {
		return err
	}
	r := loopResult{Loop: loop, Buckets: make([]int64, int(o.window/o.bucket))}
	buckets := make([]atomic.Int64, len(r.Buckets))
	var failed atomic.Int64
	var mu sync.Mutex // guards r.FirstNs
	start := time.Now()
	finished := func(ok bool) {
		if !ok {
			if ctx.Err() == nil {
				failed.Add(1)
			}
			return
		}
		if i := int(time.Since(start) / o.bucket); i < len(buckets) {
			buckets[i].Add(1)
		}
	}
	var one func() bool
	switch loop {
	case "plain":
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"tell me a story"}],"stream":false,"max_tokens":%d}`, model, o.maxTokens)
		one = func() bool {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
			if err != nil {
				return false
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return false
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return err == nil && resp.StatusCode == http.StatusOK
		}
	case "goopenai":
		cfg := openai.DefaultConfig("none")
		cfg.BaseURL, cfg.HTTPClient = base, hc
		oc := openai.NewClientWithConfig(cfg)
		one = func() bool {
			t0 := time.Now()
			s, err := oc.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: model, MaxCompletionTokens: o.maxTokens,
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "tell me a story"}}})
			if err != nil {
				return false
			}
			defer s.Close()
			first := true
			for {
				c, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return true
				}
				if err != nil {
					return false
				}
				if first && len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
					first = false
					if t0.Sub(start) >= o.warmup {
						lag := time.Since(t0)
						mu.Lock()
						r.FirstNs = append(r.FirstNs, int64(lag))
						mu.Unlock()
					}
				}
			}
		}
	default:
		return fmt.Errorf("unknown loop %q", loop)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil && time.Since(start) < o.window {
				finished(one())
			}
		})
	}
	time.AfterFunc(o.window+10*time.Second, cancel) // a stuck request does not hold the run
	wg.Wait()
	for i := range buckets {
		r.Buckets[i] = buckets[i].Load()
	}
	r.Failed = failed.Load()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// rate is a loop's requests per second over buckets [from, to).
func (r loopResult) rate(o options, from, to int) float64 {
	to = min(to, len(r.Buckets))
	if to <= from {
		return 0 // a window of one bucket: -window shorter than two -bucket
	}
	var n int64
	for _, b := range r.Buckets[from:to] {
		n += b
	}
	return float64(n) / (float64(to-from) * o.bucket.Seconds())
}

// quantile is the q-quantile (nearest rank) of ns, in milliseconds.
func quantile(ns []int64, q float64) float64 {
	if len(ns) == 0 {
		return 0
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	i := min(len(s)-1, int(q*float64(len(s))))
	return float64(s[i]) / 1e6
}

func printLoop(o options, round int, r loopResult) {
	line := fmt.Sprintf("round %d  %-9s load=%s,%s,%s failed=%d", round, r.Loop, r.Load[0], r.Load[1], r.Load[2], r.Failed)
	if o.mode == "firsttoken" {
		line += fmt.Sprintf("  requests/s=%.0f  first-token lag n=%d p50=%.1f ms p99=%.1f ms",
			r.rate(o, 1, len(r.Buckets)), len(r.FirstNs), quantile(r.FirstNs, 0.5), quantile(r.FirstNs, 0.99))
	} else {
		line += fmt.Sprintf("  requests/s=%.0f (after the first bucket)  per %s:", r.rate(o, 1, len(r.Buckets)), o.bucket)
		for i := range r.Buckets {
			line += fmt.Sprintf(" %.0f", r.rate(o, i, i+1))
		}
		// Flatness: the last bucket against the second (the first holds
		// the start).
		if len(r.Buckets) > 2 {
			line += fmt.Sprintf("  last/second=%.2f", r.rate(o, len(r.Buckets)-1, len(r.Buckets))/r.rate(o, 1, 2))
		}
	}
	fmt.Println(line)
}

// printPerRecordRatios compares every loop with the plain loop of its mode
// (plain, or goopenai), round by round.
func printPerRecordRatios(o options, order []string, all map[string][]loopResult) {
	ref := "plain"
	if o.mode == "firsttoken" {
		ref = "goopenai"
	}
	for _, loop := range order {
		if loop == ref || len(all[ref]) == 0 {
			continue
		}
		line := fmt.Sprintf("%s / %s by round:", loop, ref)
		for i, r := range all[loop] {
			if i >= len(all[ref]) {
				break
			}
			p := all[ref][i]
			if o.mode == "firsttoken" {
				line += fmt.Sprintf("  p99 %.2fx p50 %.2fx", quantile(r.FirstNs, 0.99)/quantile(p.FirstNs, 0.99), quantile(r.FirstNs, 0.5)/quantile(p.FirstNs, 0.5))
			} else {
				line += fmt.Sprintf("  requests/s %.3fx", r.rate(o, 1, len(r.Buckets))/p.rate(o, 1, len(p.Buckets)))
			}
		}
		fmt.Println(line)
	}
}
