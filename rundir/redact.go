package rundir

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
	m.Engine.Notes = redact.All(m.Engine.Notes)
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
