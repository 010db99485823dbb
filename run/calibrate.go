package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/llmbench-org/llmbench/calibrate"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// CalibrationFile is where a run keeps what the engine said of its prompt
// token count (calibrate.Result as JSON).
const CalibrationFile = "calibration.json"

// Bounds of calibration: the whole, and each request of it.
const (
	calibrationTimeout        = 30 * time.Second
	calibrationRequestTimeout = 10 * time.Second
)

// calibrated is the calibrate stage: the plan fitted to the engine's prompt
// token count (fitPrompts) and the sentence for the summary, when the
// scenario calibrates (its default); the plan as it is otherwise.
func calibrated(ctx context.Context, stop <-chan struct{}, rq scenarios.Request, plan *workload.Plan, up *engineUp, dir string, log io.Writer) (*workload.Plan, string) {
	if !rq.Calibrated() {
		return plan, ""
	}
	return fitPrompts(ctx, plan, up.ep, rq.Endpoint, up.apiKey, dir, stop, log)
}

// fitPrompts asks the engine, before anything is measured, how many tokens
// it adds to a request's prompt (docs/decisions/0406) and returns the plan
// fitted to it, with a sentence for the summary. When the engine cannot
// tell, the plan is returned as it was and the sentence says why: the
// summary then shows how far the engine's count is from the plan's.
func fitPrompts(ctx context.Context, plan *workload.Plan, ep engine.Endpoint, endpoint, apiKey, dir string, stop <-chan struct{}, log io.Writer) (*workload.Plan, string) {
	// Calibration is bounded as a whole and per request (an engine that
	// streams forever, or never answers, must not hold the run), and a stop
	// ends it.
	ctx, cancel := context.WithTimeout(ctx, calibrationTimeout)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	hc := client.NewHTTPClient(calibrationRequestTimeout)
	cfg := calibrate.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: ep.Dialect, APIKey: apiKey, Endpoint: endpoint, HTTPClient: hc}
	res, err := calibrate.Probe(ctx, cfg)
	probeImages(ctx, cfg, plan, &res, log) // images.go
	if b, jerr := json.MarshalIndent(res, "", "  "); jerr == nil {
		// What the engine answered may echo a key or a URL's secret.
		_ = writeRunFile(dir, CalibrationFile, []byte(redact.Text(string(b))+"\n"))
	}
	if err != nil {
		note := redact.Text(fmt.Sprintf("failed: %v; prompts are sent as planned", err))
		fmt.Fprintf(log, "llmbench: prompt calibration %s\n", note)
		return plan, note
	}
	fitted := plan.WithFit(res.Fit())
	note := res.String()
	if real := fitted.RealPrompts(calibrate.MaxCount); len(real) > 0 {
		// A file's text is not fitted: the engine counts it, and the plan
		// takes its counts as the prompts' lengths.
		counted, err := calibrate.Count(ctx, cfg, real)
		if err != nil {
			return fitted, note + fmt.Sprintf("; the file's prompts keep their word counts (%v)", err)
		}
		return fitted.WithPromptCounts(counted.Tokens), note + fmt.Sprintf("; the file's %d prompts counted by %s", len(counted.Tokens), counted.Source)
	}
	if fitted != plan {
		note += "; synthetic prompts fitted so the engine counts the planned prompt_tokens"
	}
	return fitted, note
}
