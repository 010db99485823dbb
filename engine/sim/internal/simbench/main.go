// Command simbench measures the simulated engine's own cost: tokens streamed
// per engine core-second, and concurrent streams sustained with memory per
// stream. The engine runs in a child process (this same binary with -serve)
// so that its CPU time and memory are measured apart from the load
// generator's. Results go to engine/sim/BENCHMARKS.md.
//
//	go run ./engine/sim/internal/simbench -mode throughput
//	go run ./engine/sim/internal/simbench -mode concurrency -streams 20000 -proto h2
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/llmbench-org/llmbench/engine/sim"
)

type options struct {
	mode       string
	streams    int
	maxTokens  int
	decodeBase time.Duration
	warmup     time.Duration
	window     time.Duration
	proto      string
	rampPerSec int
}

func main() {
	var o options
	serveMode := flag.Bool("serve", false, "internal: run the engine (child process)")
	flag.StringVar(&o.mode, "mode", "throughput", "throughput | concurrency")
	flag.IntVar(&o.streams, "streams", 0, "concurrent streams (default 64 for throughput, 20000 for concurrency)")
	flag.IntVar(&o.maxTokens, "max-tokens", 0, "tokens per request (default 2000 / 40)")
	flag.DurationVar(&o.decodeBase, "decode-base", 0, "engine pass time (default 2ms / 1s)")
	flag.DurationVar(&o.warmup, "warmup", 0, "time before the measured window (default 3s / until all streams are open)")
	flag.DurationVar(&o.window, "window", 15*time.Second, "measured window")
	flag.StringVar(&o.proto, "proto", "h1", "h1 (one connection per stream) | h2 (h2c, streams share connections)")
	flag.IntVar(&o.rampPerSec, "ramp", 4000, "concurrency mode: new streams per second while ramping up")
	maxRunning := flag.Int("max-running", 64, "internal: engine max running requests")
	kvBlocks := flag.Int("kv-blocks", 8192, "internal: engine KV blocks")
	flag.Parse()
	if *serveMode {
		if err := serve(*maxRunning, *kvBlocks, o.decodeBase); err != nil {
			fmt.Fprintln(os.Stderr, "simbench serve:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "simbench:", err)
		os.Exit(1)
	}
}

// serve runs the engine on a free port, prints its base URL, and stops on SIGINT.
func serve(maxRunning, kvBlocks int, decodeBase time.Duration) error {
	p, err := sim.Preset("tiny")
	if err != nil {
		return err
	}
	p.MaxRunningRequests = maxRunning
	p.KVBlocks = kvBlocks
	// Admit a whole wave of short prompts in one pass: the benchmark
	// measures the engine's own cost, not chunked-prefill queueing.
	p.MaxPrefillTokens = max(p.MaxPrefillTokens, 8*maxRunning)
	p.DecodeBase = decodeBase
	p.DecodePerSeq = 0
	p.PrefixCache = false
	e, err := sim.New(sim.Config{Params: p, MaxStepTruth: 1, MaxRequestTruth: -1, StepTruthPath: os.Getenv("SIMBENCH_STEPS")})
	if err != nil {
		return err
	}
	ep, err := e.Start(context.Background())
	if err != nil {
		return err
	}
	fmt.Println(ep.BaseURL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.Stop(ctx)
}

// child is the engine process.
type child struct {
	cmd  *exec.Cmd
	base string
}

func startChild(o options, maxRunning, kvBlocks int) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-serve", "-max-running", strconv.Itoa(maxRunning),
		"-kv-blocks", strconv.Itoa(kvBlocks), "-decode-base", o.decodeBase.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("engine did not report its address: %w", err)
	}
	return &child{cmd: cmd, base: strings.TrimSpace(line)}, nil
}

func (c *child) stop() error {
	_ = c.cmd.Process.Signal(os.Interrupt)
	return c.cmd.Wait()
}

// cpu is the child's user+system CPU time so far (/proc/PID/stat, via procfs).
func (c *child) cpu() (time.Duration, error) {
	p, err := procfs.NewProc(c.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return time.Duration(st.CPUTime() * float64(time.Second)), nil
}

// rss is the child's resident and peak memory (/proc/PID/status, via procfs).
func (c *child) rss() (cur, peak int64) {
	p, err := procfs.NewProc(c.cmd.Process.Pid)
	if err != nil {
		return 0, 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, 0
	}
	return int64(st.VmRSS), int64(st.VmHWM)
}

// counters shared by the load goroutines.
type counters struct {
	tokens, active, done, failed atomic.Int64
}

func run(o options) error {
	concurrency := o.mode == "concurrency"
	if o.streams == 0 {
		o.streams = map[bool]int{false: 64, true: 20000}[concurrency]
	}
	if o.maxTokens == 0 {
		o.maxTokens = map[bool]int{false: 2000, true: 40}[concurrency]
	}
	if o.decodeBase == 0 {
		o.decodeBase = map[bool]time.Duration{false: 2 * time.Millisecond, true: time.Second}[concurrency]
	}
	kvBlocks := max(8192, o.streams*(o.maxTokens/16+3))
	c, err := startChild(o, o.streams, kvBlocks)
	if err != nil {
		return err
	}
	defer c.stop()

	tr := &http.Transport{MaxIdleConnsPerHost: o.streams, MaxConnsPerHost: 0, DisableCompression: true}
	if o.proto == "h2" {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cnt counters
	var wg sync.WaitGroup
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"tell me a story"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`, o.maxTokens)
	start := time.Now()
	for i := range o.streams {
		if concurrency && o.rampPerSec > 0 {
			due := start.Add(time.Duration(i) * time.Second / time.Duration(o.rampPerSec))
			time.Sleep(time.Until(due))
		}
		wg.Go(func() { loop(ctx, client, c.base, body, &cnt) })
	}
	if concurrency {
		// Warm-up: until every stream is open.
		deadline := time.Now().Add(2 * time.Minute)
		for cnt.active.Load() < int64(o.streams) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(o.warmup)
	} else {
		w := o.warmup
		if w == 0 {
			w = 3 * time.Second
		}
		time.Sleep(w)
	}
	cpu0, err := c.cpu()
	if err != nil {
		return err
	}
	tok0, t0 := cnt.tokens.Load(), time.Now()
	minActive := cnt.active.Load()
	for end := t0.Add(o.window); time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		minActive = min(minActive, cnt.active.Load())
	}
	cpu1, _ := c.cpu()
	tok1, el := cnt.tokens.Load(), time.Since(t0)
	rss, peak := c.rss()
	cancel()
	wg.Wait()

	tokens := tok1 - tok0
	engineCPU := cpu1 - cpu0
	fmt.Printf("mode=%s proto=%s streams=%d max_tokens=%d decode_base=%v window=%v go=%s cores=%d\n",
		o.mode, o.proto, o.streams, o.maxTokens, o.decodeBase, el.Round(time.Millisecond), runtime.Version(), runtime.NumCPU())
	fmt.Printf("tokens_streamed=%d tokens_per_s=%.0f engine_cpu_s=%.2f engine_cores=%.2f\n",
		tokens, float64(tokens)/el.Seconds(), engineCPU.Seconds(), engineCPU.Seconds()/el.Seconds())
	if engineCPU > 0 {
		fmt.Printf("tokens_per_engine_core_second=%.0f\n", float64(tokens)/engineCPU.Seconds())
	}
	fmt.Printf("min_streaming_in_window=%d failed_requests=%d\n", minActive, cnt.failed.Load())
	fmt.Printf("engine_rss_mb=%.1f engine_peak_rss_mb=%.1f rss_per_stream_kb=%.1f\n",
		float64(rss)/1e6, float64(peak)/1e6, float64(rss)/1e3/float64(max(minActive, 1)))
	return nil
}

// loop sends requests back to back, counting streamed tokens, until ctx ends.
func loop(ctx context.Context, client *http.Client, base, body string, cnt *counters) {
	for ctx.Err() == nil {
		if err := stream(ctx, client, base, body, cnt); err != nil && ctx.Err() == nil {
			cnt.failed.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

var contentMark = []byte(`"delta":{"content"`)

func stream(ctx context.Context, client *http.Client, base, body string, cnt *counters) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	streaming := false
	defer func() {
		if streaming {
			cnt.active.Add(-1)
		}
	}()
	br := bufio.NewReaderSize(resp.Body, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if bytes.Contains(line, contentMark) {
			cnt.tokens.Add(1)
			if !streaming {
				streaming = true // counted from its first token on
				cnt.active.Add(1)
			}
		}
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			cnt.done.Add(1)
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("stream ended without [DONE]")
			}
			return err
		}
	}
}
