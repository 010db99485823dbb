package report

import (
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/scrape"
)

// RedactRecord removes secrets from a record's free text (its error
// message) in place.
func RedactRecord(r *client.Record) {
	r.Error = redact.Text(r.Error)
}

// RedactRow removes secrets from a scrape row's target and error in place.
func RedactRow(r *scrape.Row) {
	r.Target = redact.URL(r.Target)
	r.Error = redact.Text(r.Error)
}

// RedactMeta removes secrets from a run's metadata: the engine's URLs and
// notes, the description, the prompt calibration note, the stop reason and
// the boundary scrapes. It sets m's fields to new values and never writes
// through to slices or rows it shares with a caller.
func RedactMeta(m *RunMeta) {
	m.Engine.BaseURL = redact.URL(m.Engine.BaseURL)
	m.Engine.MetricsURL = redact.URL(m.Engine.MetricsURL)
	m.Engine.Notes = redactAll(m.Engine.Notes)
	m.Description = redact.Text(m.Description)
	m.PromptCalibration = redact.Text(m.PromptCalibration)
	m.Stopped = redact.Text(m.Stopped)
	// New phases and rows: the caller's stay as they were.
	m.Phases = slices.Clone(m.Phases)
	for i := range m.Phases {
		ph := &m.Phases[i]
		ph.Before, ph.After = redactedRow(ph.Before), redactedRow(ph.After)
		ph.BeforeRows = redactRows(ph.BeforeRows)
		ph.AfterRows = redactRows(ph.AfterRows)
	}
}

func redactedRow(r *scrape.Row) *scrape.Row {
	if r == nil {
		return nil
	}
	c := *r
	RedactRow(&c)
	return &c
}

func redactAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = redact.Text(s)
	}
	return out
}

func redactRows(rows []scrape.Row) []scrape.Row {
	if rows == nil {
		return nil
	}
	out := slices.Clone(rows)
	for i := range out {
		RedactRow(&out[i])
	}
	return out
}

// redactSummary removes secrets from everything in s that came from outside
// as text: a last pass after Compute, so no derived string escapes it.
func redactSummary(s *Summary) {
	s.Run.Description = redact.Text(s.Run.Description)
	s.Run.Stopped = redact.Text(s.Run.Stopped)
	s.Engine.BaseURL = redact.URL(s.Engine.BaseURL)
	s.Engine.MetricsURL = redact.URL(s.Engine.MetricsURL)
	s.Engine.Notes = redactAll(s.Engine.Notes)
	s.Health.Problems = redactAll(s.Health.Problems)
	s.Client.Tokens.PromptCalibration = redact.Text(s.Client.Tokens.PromptCalibration)
	redactClient(&s.Client)
	for i := range s.Phases {
		redactClient(&s.Phases[i].Client)
		redactServer(s.Phases[i].Server)
	}
	redactServer(s.Server)
	for i := range s.Findings {
		s.Findings[i].Verdict = redact.Text(s.Findings[i].Verdict)
	}
	if sw := s.Sweep; sw != nil {
		sw.Saturation.Reason = redact.Text(sw.Saturation.Reason)
	}
}

func redactClient(c *ClientSide) {
	for k, v := range c.Requests.ErrorSamples {
		c.Requests.ErrorSamples[k] = redact.Text(v)
	}
}

func redactServer(s *ServerSide) {
	if s == nil {
		return
	}
	for i, t := range s.Targets {
		s.Targets[i] = redact.URL(t)
	}
	s.Notes = redactAll(s.Notes)
}
