package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

func newInspectCmd(cio *cliIO) *cobra.Command {
	var dialect string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect URL|FILE",
		Short: "Show what llmbench sees of an engine's /metrics: the dialect and the canonical values",
		Long: "inspect scrapes a /metrics URL once (or reads an exposition file), detects the engine's dialect\n" +
			"(or uses --dialect), and prints the canonical values llmbench derives and the metric behind each.\n" +
			"Given the engine's API root instead (http://host:8000 or http://host:8000/v1), it first finds the\n" +
			"model and the metrics as a run against an external engine would, and says what it found.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dialect != "" && dialect != scrape.Auto {
				if _, err := scrape.DialectFor(dialect); err != nil {
					return asUsage(err)
				}
			}
			target := args[0]
			if err := notARun(target); err != nil {
				return asUsage(err)
			}
			if base, ok := apiRoot(target); ok {
				// The engine's API root rather than its /metrics: find the
				// metrics as a run would, and say what was found.
				ep, err := engine.External{Endpoint: engine.Endpoint{BaseURL: base}}.Start(cmd.Context())
				for _, n := range ep.Notes {
					fmt.Fprintf(cio.stderr, "llmbench: engine: %s\n", n)
				}
				if err != nil {
					fmt.Fprintf(cio.stderr, "llmbench: engine: %v\n", err)
				}
				if ep.MetricsURL == "" {
					return fmt.Errorf("inspect %s: found no /metrics beside the API; give the metrics URL itself", target)
				}
				target = ep.MetricsURL
			}
			rep, err := scrape.InspectDialect(cmd.Context(), target, dialect)
			if err != nil {
				return err
			}
			// The report quotes the URL it read, userinfo and query included,
			// and the engine's own label values: the one redaction policy
			// applies to what inspect prints as to every output.
			out := redact.SafeWriter(cio.stdout)
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			if err := rep.WriteText(out); err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dialect, "dialect", "", "metric dialect (default: detect from the metric names)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// apiRoot reports whether target is an engine's API root (an http(s) URL
// whose path is empty, "/" or ends in /v1) and returns its /v1 base URL.
func apiRoot(target string) (string, bool) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	switch p := strings.TrimSuffix(u.Path, "/"); {
	case p == "":
		u.Path = "/v1"
	case strings.HasSuffix(p, "/v1"):
		u.Path = p
	default:
		return "", false
	}
	return u.String(), true
}

// notARun refuses a run directory or a trial set given for an exposition
// file: inspect reads an engine's /metrics, not what a run recorded.
func notARun(target string) error {
	if fileExists(filepath.Join(target, rundir.TrialsFile)) {
		trials, err := rundir.Trials(target)
		if err != nil {
			return fmt.Errorf("%s is a trial set (llmbench run --repeat): %w", target, err)
		}
		return fmt.Errorf("%s is a trial set of %d trials (%s): inspect reads an engine's /metrics (a URL or an exposition file), not a run; llmbench report %s shows what each trial recorded",
			target, len(trials), trialNames(trials), target)
	}
	if fileExists(filepath.Join(target, rundir.RunFile)) {
		return fmt.Errorf("%s is a run directory: inspect reads an engine's /metrics (a URL or an exposition file), not a run; llmbench report %s shows what it recorded", target, target)
	}
	return nil
}
