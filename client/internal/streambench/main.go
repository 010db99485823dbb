//go:build unix

// Command streambench measures the llmbench client's CPU per streamed chunk
// against the floor and against Python, and how many concurrent streams one
// client process holds and at what memory each. The engine is `llmbench
// serve` in a child process (-llmbench names the binary), or -target names
// one already running; every reading loop runs in a child process of its
// own, one after another in the same run, so that each one's CPU (getrusage)
// and memory are its own. Results go to client/BENCHMARKS.md.
//
//	go build -o /tmp/llmbench ./cmd/llmbench
//	go build -o /tmp/streambench ./client/internal/streambench
//	/tmp/streambench -llmbench /tmp/llmbench -mode cpu -streams 1024 -rate 50   # llmbench vs raw loops vs aiohttp
//	/tmp/streambench -llmbench /tmp/llmbench -mode streams -streams 16000       # concurrent streams, memory per stream
//
// The loops (-loops):
//   - llmbench: client.Client.Do, as `llmbench run` uses it (connections
//     warmed first, GOGC off with a 1 GiB limit as in a run).
//   - raw: the floor with net/http: http.Client with the same transport
//     settings, each line read with bufio.Reader.ReadSlice, a data line
//     counted and timestamped, no JSON.
//   - rawconn: the floor without net/http's Transport: one net.Conn per
//     stream, the request written by hand, the response read with
//     http.ReadResponse in the stream's own goroutine, lines as in raw.
//   - baseline: the llmbench loop of another streambench binary (-baseline),
//     built from an earlier client, for before/after ratios in one run.
//   - epoll (Linux): no netpoller: one goroutine per P reads the connections
//     its own epoll set reports ready, one read each (epoll_linux.go).
//   - aiohttp: aiohttp_loop.py under /usr/bin/python3, shaped like vLLM's
//     benchmark_serving (needs python3-aiohttp).
package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/llmbench-org/llmbench/client"
)

//go:embed aiohttp_loop.py
var aiohttpLoop []byte

type options struct {
	mode       string
	target     string
	streams    int
	rate       float64
	maxTokens  int
	warmup     time.Duration
	window     time.Duration
	loops      string
	rounds     int
	procs      string
	ramp       int
	cpuprofile string
	python     string
	settle     time.Duration
	baseline   string
	llmbench   string
	// the per-record modes (perrecord.go)
	conc      int
	bucket    time.Duration
	clientCPU string
	serverCPU string
	binaries  string // name=path,…: more llmbench binaries, each a loop of its name
}

func main() {
	var o options
	loop := flag.String("loop", "", "internal: run one reading loop (child process)")
	base := flag.String("base", "", "internal: the engine's base URL, for -loop")
	flag.StringVar(&o.mode, "mode", "cpu", "cpu (CPU per chunk, loops one after another) | streams (concurrent streams, memory per stream) | perrecord (non-streamed requests/s of llmbench run vs net/http, perrecord.go) | firsttoken (first-token lag of llmbench run vs go-openai)")
	flag.StringVar(&o.target, "target", "", "base URL of an engine already running (e.g. llmbench serve's http://127.0.0.1:30000/v1); default: start llmbench serve")
	flag.StringVar(&o.llmbench, "llmbench", "llmbench", "the llmbench binary whose serve command is started")
	flag.StringVar(&model, "model", model, "the model name requested")
	flag.IntVar(&o.streams, "streams", 1024, "concurrent streams")
	flag.Float64Var(&o.rate, "rate", 0, "tokens per second per stream: the engine's pass time is 1/rate (default 50 for cpu, 1 for streams)")
	flag.IntVar(&o.maxTokens, "max-tokens", 0, "tokens per request (default 200 for cpu, 30 for streams)")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "cpu mode: time before the measured window")
	flag.DurationVar(&o.window, "window", 10*time.Second, "cpu mode: measured window")
	flag.StringVar(&o.loops, "loops", "llmbench,raw,rawconn,aiohttp", "cpu mode: loops to run, in order")
	flag.IntVar(&o.rounds, "rounds", 1, "cpu mode: times to run the list of loops")
	flag.StringVar(&o.procs, "procs", "", "GOMAXPROCS values to run the Go loops at, e.g. 1,2 (default: the machine's)")
	flag.IntVar(&o.ramp, "ramp", 4000, "streams mode: new streams per second")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write the llmbench loop's CPU profile over the window to this file")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "the Python with aiohttp")
	flag.StringVar(&o.baseline, "baseline", "", "another streambench binary (built from an earlier client) whose llmbench loop runs as loop \"baseline\"")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "streams mode: time from the last stream's start to the measurement")
	flag.IntVar(&o.conc, "concurrency", 64, "perrecord mode: closed-loop users")
	flag.DurationVar(&o.bucket, "bucket", 5*time.Second, "perrecord and firsttoken modes: requests/s are printed per bucket")
	flag.StringVar(&o.clientCPU, "client-cpu", "0", "perrecord and firsttoken modes: the CPU (taskset -c) every client loop runs on, with GOMAXPROCS=1; \"\" = unpinned")
	flag.StringVar(&o.serverCPU, "server-cpu", "1", "perrecord and firsttoken modes: the CPU the server runs on; \"\" = unpinned")
	flag.StringVar(&o.binaries, "binaries", "", "perrecord and firsttoken modes: name=path,… other llmbench binaries (built from other commits), each run as the loop of its name")
	serveTriv := flag.Bool("serve-trivial", false, "internal: serve the trivial non-streamed engine (perrecord mode)")
	flag.Parse()
	perRecordMode := o.mode == "perrecord" || o.mode == "firsttoken"
	if !perRecordMode {
		o.serverCPU = "" // the CPU-per-chunk modes run unpinned, as before
	}
	if perRecordMode && !isSet("loops") {
		o.loops = map[bool]string{true: "llmbench,goopenai", false: "llmbench,plain"}[o.mode == "firsttoken"]
	}
	if perRecordMode && !isSet("window") {
		o.window = map[bool]time.Duration{true: 30 * time.Second, false: 60 * time.Second}[o.mode == "firsttoken"]
	}
	if o.rate == 0 {
		o.rate = map[bool]float64{true: 1, false: 50}[o.mode == "streams"]
	}
	if o.maxTokens == 0 {
		o.maxTokens = map[bool]int{true: 60, false: 200}[o.mode == "streams"]
	}
	var err error
	switch {
	case *serveTriv:
		err = serveTrivial()
	case *loop != "" && perRecordMode:
		err = runGoLoop(*loop, *base, o)
	case *loop != "":
		err = runLoop(*loop, *base, o)
	case perRecordMode:
		err = runPerRecord(o)
	default:
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "streambench:", err)
		os.Exit(1)
	}
}

// startEngine starts `llmbench serve` (the built-in engine), paced at
// o.rate tokens per second per stream with room for every stream at once,
// and returns its base URL.
func startEngine(o options) (*exec.Cmd, string, error) {
	cmd := pinned(o.serverCPU, o.llmbench, "serve", "--addr", "127.0.0.1:0", "--dialect", "sglang", "--preset", "tiny",
		"--grace", "1s", "--model", model,
		"--param", "decode_base="+time.Duration(float64(time.Second)/o.rate).String(),
		"--param", "decode_per_seq=0s",
		"--param", "max_running_requests="+strconv.Itoa(o.streams),
		"--param", "max_prefill_tokens="+strconv.Itoa(max(2048, 64*o.streams)),
		"--param", "kv_blocks="+strconv.Itoa(max(2048, o.streams*(o.maxTokens/16+4))),
		"--param", "max_model_len="+strconv.Itoa(max(4096, o.maxTokens+64)),
		"--param", "prefix_cache=false")
	return startListening(cmd, o.llmbench+" serve (build it with go build -o /tmp/llmbench ./cmd/llmbench, or pass -target)")
}

// isSet reports whether the flag name was given on the command line.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// model is the served model name the loops ask for; with -target, the
// engine must serve it or ignore the name (llmbench serve takes --model).
var model = "llmbench-sim"

// result is what a loop child reports.
type result struct {
	Loop     string `json:"loop"`
	Procs    int    `json:"procs,omitempty"`
	Chunks   int64  `json:"chunks"`  // content chunks read in the window
	Bunched  int64  `json:"bunched"` // of which read within a quarter pass of the previous one: late
	CPUNs    int64  `json:"cpu_ns"`
	WallNs   int64  `json:"wall_ns"`
	Failed   int64  `json:"failed"`
	Requests int64  `json:"requests"`
	// streams mode
	Streams       int     `json:"streams,omitempty"`
	Concurrent    int     `json:"concurrent,omitempty"` // streams receiving chunks at the measuring instant
	RSSBase       int64   `json:"rss_base,omitempty"`
	RSSLive       int64   `json:"rss_live,omitempty"`  // after a collection, at the measuring instant
	RSSNoGC       int64   `json:"rss_no_gc,omitempty"` // before it (GOGC off, as in a run)
	HeapLive      int64   `json:"heap_live,omitempty"` // heap in use after the collection
	StackInuse    int64   `json:"stack_inuse,omitempty"`
	Goroutines    int     `json:"goroutines,omitempty"`
	GoroutineBase int     `json:"goroutine_base,omitempty"`
	Lost          int64   `json:"lost"`
	ChunksShort   int64   `json:"chunks_short"` // OK requests with fewer chunks than max_tokens
	WallS         float64 `json:"wall_s,omitempty"`
}

func run(o options) error {
	base := o.target
	if base == "" {
		cmd, b, err := startEngine(o)
		if err != nil {
			return err
		}
		defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
		base = b
	}
	procs := []string{""}
	if o.procs != "" {
		procs = strings.Split(o.procs, ",")
	}
	fmt.Printf("streambench mode=%s streams=%d rate=%g tok/s max_tokens=%d engine=%s go=%s cpus=%d\n",
		o.mode, o.streams, o.rate, o.maxTokens, base, runtime.Version(), runtime.NumCPU())
	if o.mode == "streams" {
		r, err := child(o, "llmbench", base, procs[0])
		if err != nil {
			return err
		}
		printStreams(o, r)
		return nil
	}
	var all []result
	for round := range o.rounds {
		for _, loop := range strings.Split(o.loops, ",") {
			for _, p := range procs {
				if loop == "aiohttp" && p != procs[0] {
					continue
				}
				r, err := child(o, loop, base, p)
				if err != nil {
					return fmt.Errorf("loop %s: %w", loop, err)
				}
				all = append(all, r)
				fmt.Printf("round %d  %-9s procs=%-2s chunks/s=%8.0f  cpu/chunk=%6.2f µs  cpu=%.2f cores  bunched=%5.1f%%  failed=%d\n",
					round+1, r.Loop, procStr(r.Procs), float64(r.Chunks)/(float64(r.WallNs)/1e9), perChunk(r),
					float64(r.CPUNs)/float64(r.WallNs), 100*float64(r.Bunched)/float64(max(r.Chunks, 1)), r.Failed)
			}
		}
	}
	printRatios(all)
	return nil
}

func procStr(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

func perChunk(r result) float64 { return float64(r.CPUNs) / 1e3 / float64(max(r.Chunks, 1)) }

// printRatios compares every loop with raw and aiohttp of the same round
// (one pass of the loops list), then over all rounds.
func printRatios(all []result) {
	sum := map[string][2]int64{}
	for _, r := range all {
		k := r.Loop + "@" + procStr(r.Procs)
		s := sum[k]
		sum[k] = [2]int64{s[0] + r.CPUNs, s[1] + r.Chunks}
	}
	per := func(k string) float64 { s := sum[k]; return float64(s[0]) / 1e3 / float64(max(s[1], 1)) }
	fmt.Println("over all rounds (CPU per chunk, µs, and ratios):")
	for k := range sum {
		line := fmt.Sprintf("  %-14s %6.2f", k, per(k))
		for ref := range sum {
			if strings.HasPrefix(ref, "raw@") || strings.HasPrefix(ref, "rawconn@") || strings.HasPrefix(ref, "aiohttp@") {
				if ref != k && (strings.HasPrefix(ref, "aiohttp") || strings.SplitN(ref, "@", 2)[1] == strings.SplitN(k, "@", 2)[1]) {
					line += fmt.Sprintf("  %.2fx %s", per(k)/per(ref), ref)
				}
			}
		}
		fmt.Println(line)
	}
}

func printStreams(o options, r result) {
	n := max(r.Streams, 1) // every stream holds a connection and a request in flight
	fmt.Printf("streams=%d concurrent_at_measure=%d requests=%d lost=%d chunks_short=%d wall=%.1fs\n",
		r.Streams, r.Concurrent, r.Requests, r.Lost, r.ChunksShort, r.WallS)
	fmt.Printf("rss_base=%.1f MB rss_live=%.1f MB (after a GC) rss_no_gc=%.1f MB heap_live=%.1f MB stacks=%.1f MB goroutines=%d (base %d)\n",
		mb(r.RSSBase), mb(r.RSSLive), mb(r.RSSNoGC), mb(r.HeapLive), mb(r.StackInuse), r.Goroutines, r.GoroutineBase)
	fmt.Printf("per stream: rss_live=%.1f KB rss_no_gc=%.1f KB heap=%.1f KB stack=%.1f KB goroutines=%.2f\n",
		kb(r.RSSLive-r.RSSBase)/float64(n), kb(r.RSSNoGC-r.RSSBase)/float64(n), kb(r.HeapLive)/float64(n),
		kb(r.StackInuse)/float64(n), float64(r.Goroutines-r.GoroutineBase)/float64(n))
}

func mb(b int64) float64 { return float64(b) / 1e6 }
func kb(b int64) float64 { return float64(b) / 1e3 }

// child runs one loop in a process of its own and returns its report.
func child(o options, loop, base, procs string) (result, error) {
	var cmd *exec.Cmd
	if loop == "aiohttp" {
		dir, err := os.MkdirTemp("", "streambench")
		if err != nil {
			return result{}, err
		}
		defer os.RemoveAll(dir)
		script := filepath.Join(dir, "aiohttp_loop.py")
		if err := os.WriteFile(script, aiohttpLoop, 0o644); err != nil {
			return result{}, err
		}
		cmd = exec.Command(o.python, script, base+"/chat/completions", strconv.Itoa(o.streams),
			strconv.Itoa(o.maxTokens), fmt.Sprint(o.warmup.Seconds()), fmt.Sprint(o.window.Seconds()), model, fmt.Sprint(o.rate))
	} else {
		exe, err := os.Executable()
		if err != nil {
			return result{}, err
		}
		name := loop
		if loop == "baseline" {
			if o.baseline == "" {
				return result{}, errors.New("loop baseline needs -baseline")
			}
			exe, name = o.baseline, "llmbench"
		}
		cmd = exec.Command(exe, "-loop", name, "-base", base, "-model", model, "-mode", o.mode, "-streams", strconv.Itoa(o.streams),
			"-rate", fmt.Sprint(o.rate), "-max-tokens", strconv.Itoa(o.maxTokens), "-warmup", o.warmup.String(),
			"-window", o.window.String(), "-ramp", strconv.Itoa(o.ramp), "-cpuprofile", o.cpuprofile, "-settle", o.settle.String())
		cmd.Env = os.Environ()
		if procs != "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+procs)
		}
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var r result
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		return result{}, fmt.Errorf("report %q: %w", out, err)
	}
	r.Loop = loop
	return r, nil
}

// window is the measured interval on a loop's clock.
type window struct {
	start    time.Time
	from, to time.Duration
	// bunchGap is a quarter of the engine's pass: a content chunk read
	// sooner than this after the previous one of its stream was read late,
	// together with it (the engine sends one per pass).
	bunchGap time.Duration
}

// tally counts one stream's content chunks read in the window, and those
// that came bunched with the previous one.
type tally struct{ chunks, bunched int64 }

// count counts a content chunk read at at, the previous one at prev (0 for
// none).
func (w *window) count(t *tally, prev, at time.Duration) {
	if at < w.from || at >= w.to {
		return
	}
	t.chunks++
	if prev != 0 && at-prev < w.bunchGap {
		t.bunched++
	}
}

// runLoop is a loop child: it streams until the window has passed and prints
// its result as one JSON line.
func runLoop(loop, base string, o options) error {
	debug.SetGCPercent(-1) // as `llmbench run` does (decision 0004), for every Go loop
	debug.SetMemoryLimit(1 << 30)
	if o.mode == "streams" {
		return concurrentStreams(base, o)
	}
	w := &window{start: time.Now(), from: o.warmup, to: o.warmup + o.window,
		bunchGap: time.Duration(float64(time.Second) / o.rate / 4)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counts := make([]tally, o.streams)
	var failed, requests atomic.Int64
	var streamFn func(i int)
	switch loop {
	case "llmbench":
		cl, err := client.New(client.Config{BaseURL: base, Model: model, Start: w.start,
			MaxConns: o.streams, IncludeUsage: true, Dialect: "sglang"})
		if err != nil {
			return err
		}
		defer cl.Close()
		if err := cl.Warm(ctx, o.streams); err != nil {
			return err
		}
		streamFn = func(i int) {
			req := client.Request{ID: "s" + strconv.Itoa(i), MaxTokens: o.maxTokens, IgnoreEOS: true,
				Messages: []client.Message{{Role: "user", Content: "tell me a story"}}}
			for n := 0; ctx.Err() == nil; n++ {
				rec := cl.Do(ctx, req)
				var prev time.Duration
				for _, c := range rec.Chunks {
					w.count(&counts[i], prev, c.At)
					prev = c.At
				}
				requests.Add(1)
				if !rec.OK() && ctx.Err() == nil {
					failed.Add(1)
				}
			}
		}
	case "raw":
		hc, err := rawClient(ctx, base, o.streams)
		if err != nil {
			return err
		}
		streamFn = func(i int) {
			for ctx.Err() == nil {
				err := rawStream(ctx, hc, base, o.maxTokens, w, &counts[i])
				requests.Add(1)
				if err != nil && ctx.Err() == nil {
					failed.Add(1)
				}
			}
		}
	case "rawconn":
		conns := make([]net.Conn, o.streams)
		for i := range conns {
			c, err := net.Dial("tcp", hostOf(base))
			if err != nil {
				return err
			}
			conns[i] = c
		}
		streamFn = func(i int) {
			stop := context.AfterFunc(ctx, func() { _ = conns[i].Close() })
			defer stop()
			br := bufio.NewReaderSize(conns[i], 4096)
			for ctx.Err() == nil {
				err := connStream(conns[i], br, base, o.maxTokens, w, &counts[i])
				requests.Add(1)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					return
				}
			}
		}
	case "epoll":
	default:
		return fmt.Errorf("unknown loop %q", loop)
	}
	var wg sync.WaitGroup
	var loopErr error
	if loop == "epoll" {
		wg.Go(func() {
			f, r, err := epollLoop(ctx, base, o, w, counts)
			failed.Add(f)
			requests.Add(r)
			loopErr = err
		})
	}
	for i := range o.streams {
		if streamFn != nil {
			wg.Go(func() { streamFn(i) })
		}
	}
	time.Sleep(time.Until(w.start.Add(w.from)))
	var stopProfile func()
	if o.cpuprofile != "" && loop == "llmbench" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		stopProfile = func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
	cpu0, t0 := cpuTime(), time.Now()
	time.Sleep(time.Until(w.start.Add(w.to)))
	cpu1, t1 := cpuTime(), time.Now()
	if stopProfile != nil {
		stopProfile()
	}
	cancel()
	wg.Wait()
	if loopErr != nil {
		return loopErr
	}
	var chunks, bunched int64
	for _, t := range counts {
		chunks += t.chunks
		bunched += t.bunched
	}
	return json.NewEncoder(os.Stdout).Encode(result{Loop: loop, Procs: runtime.GOMAXPROCS(0), Chunks: chunks, Bunched: bunched,
		CPUNs: int64(cpu1 - cpu0), WallNs: int64(t1.Sub(t0)), Failed: failed.Load(), Requests: requests.Load()})
}

// cpuTime is this process's user+system CPU time (getrusage).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Host
}

func requestBody(maxTokens int) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"tell me a story"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":%d,"ignore_eos":true}`,
		model, maxTokens)
}

// rawClient is an http.Client set up as client.New sets up its own, with n
// connections opened.
func rawClient(ctx context.Context, base string, n int) (*http.Client, error) {
	t := &http.Transport{MaxIdleConns: n, MaxIdleConnsPerHost: n, DisableCompression: true, IdleConnTimeout: 90 * time.Second}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	hc := &http.Client{Transport: t}
	resps := make([]*http.Response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
			resps[i], errs[i] = hc.Do(req)
		})
	}
	wg.Wait()
	for _, r := range resps {
		if r != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			_ = r.Body.Close()
		}
	}
	return hc, errors.Join(errs...)
}

var dataPrefix = []byte("data: {")

// rawStream sends one request through net/http and counts its data lines in w.
func rawStream(ctx context.Context, hc *http.Client, base string, maxTokens int, w *window, t *tally) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(requestBody(maxTokens)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return readLines(bufio.NewReaderSize(resp.Body, 4096), w, t)
}

// readLines reads one stream's lines until [DONE], timestamping each as it
// is read, and counts its content chunks in w (the JSON is not parsed: a
// content chunk is a data line with a non-empty delta.content).
func readLines(br *bufio.Reader, w *window, t *tally) error {
	var prev time.Duration
	for {
		line, err := br.ReadSlice('\n')
		at := time.Since(w.start)
		if bytes.HasPrefix(line, dataPrefix) {
			if i := bytes.Index(line, contentMark); i >= 0 && len(line) > i+len(contentMark) && line[i+len(contentMark)] != '"' {
				w.count(t, prev, at)
				prev = at
			}
		} else if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var contentMark = []byte(`"delta":{"content":"`)

// connStream sends one request on conn, written by hand, and reads the
// response in this goroutine.
func connStream(conn net.Conn, br *bufio.Reader, base string, maxTokens int, w *window, t *tally) error {
	body := requestBody(maxTokens)
	u, _ := url.Parse(base)
	head := fmt.Sprintf("POST %s/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.Path, u.Host, len(body))
	if _, err := io.WriteString(conn, head+body); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	err = readLines(bufio.NewReaderSize(resp.Body, 4096), w, t)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body) // to the end of the chunked body: the connection is reused
	}
	return err
}

// concurrentStreams opens o.streams connections, starts one request on each
// at o.ramp per second, and when all have been started (plus two seconds)
// measures memory with every stream in flight; then lets them finish and
// checks that none was lost.
func concurrentStreams(base string, o options) error {
	if os.Getenv("STREAMBENCH_HEAP") != "" {
		runtime.MemProfileRate = 1 // every allocation, for the profile
	}
	start := time.Now()
	ctx := context.Background()
	runtime.GC()
	debug.FreeOSMemory()
	var r result
	r.Loop, r.Streams, r.Procs = "llmbench", o.streams, runtime.GOMAXPROCS(0)
	r.RSSBase, r.GoroutineBase = rss(), runtime.NumGoroutine()
	cl, err := client.New(client.Config{BaseURL: base, Model: model, Start: start,
		MaxConns: o.streams, IncludeUsage: true, Dialect: "sglang", Timeout: 10 * time.Minute})
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Warm(ctx, o.streams); err != nil {
		return err
	}
	recs := make([]client.Record, o.streams)
	var wg sync.WaitGroup
	for i := range o.streams {
		if o.ramp > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(o.ramp))))
		}
		wg.Go(func() {
			recs[i] = cl.Do(ctx, client.Request{ID: "c" + strconv.Itoa(i), MaxTokens: o.maxTokens, IgnoreEOS: true,
				Messages: []client.Message{{Role: "user", Content: "tell me a story"}}})
		})
	}
	// Measure once every stream is under way (the records tell afterwards
	// how many were between their first chunk and their end then).
	time.Sleep(o.settle)
	measured := time.Since(start)
	r.RSSNoGC = rss()
	r.Goroutines = runtime.NumGoroutine()
	if path := os.Getenv("STREAMBENCH_GOROUTINES"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			_ = f.Close()
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	r.RSSLive = rss()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapLive, r.StackInuse = int64(ms.HeapInuse), int64(ms.StackInuse)
	if path := os.Getenv("STREAMBENCH_HEAP"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	wg.Wait()
	r.WallS = time.Since(start).Seconds()
	for _, rec := range recs {
		r.Requests++
		if !rec.OK() {
			r.Lost++
			fmt.Fprintf(os.Stderr, "lost %s: %s %s\n", rec.ID, rec.ErrorClass, rec.Error)
			continue
		}
		if len(rec.Chunks) < o.maxTokens {
			r.ChunksShort++
		}
		if len(rec.Chunks) > 0 && rec.Chunks[0].At < measured && rec.End > measured {
			r.Concurrent++
		}
		r.Chunks += int64(len(rec.Chunks))
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// rss is this process's resident memory (VmRSS, via procfs).
func rss() int64 {
	self, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := self.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmRSS)
}
