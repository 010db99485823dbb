package report

import "github.com/llmbench-org/llmbench/redact"

// redactSummary removes secrets from everything in s that came from outside
// as text: a last pass after Compute, so no derived string escapes it.
func redactSummary(s *Summary) {
	s.Run.Description = redact.Text(s.Run.Description)
	s.Run.Stopped = redact.Text(s.Run.Stopped)
	s.Engine.BaseURL = redact.URL(s.Engine.BaseURL)
	s.Engine.MetricsURL = redact.URL(s.Engine.MetricsURL)
	s.Engine.Notes = redact.All(s.Engine.Notes)
	s.Health.Problems = redact.All(s.Health.Problems)
	for i := range s.Health.States {
		s.Health.States[i].Says = redact.Text(s.Health.States[i].Says)
	}
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
	s.Notes = redact.All(s.Notes)
}
