package rundir

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// SpansFile holds the spans the run's OTLP receiver kept, one JSON line each
// (otlp.Span), when the scenario turns the receiver on (scrape.otlp).
const SpansFile = "spans.jsonl"

// ReadSpans reads a run directory's spans.jsonl and how many torn lines it
// skipped; a run without one has no spans.
func ReadSpans(dir string) (spans []otlp.Span, partial int, err error) {
	partial, err = ReadJSONL(filepath.Join(dir, SpansFile), func(s *otlp.Span) error {
		spans = append(spans, *s)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, partial, err
	}
	return spans, partial, nil
}
