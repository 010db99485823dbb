package run

// Name names the run's scenario and, in a trial set, which trial runs:
// "chat (trial 2 of 3)". The live views head their frames with it.
func (l Live) Name() string {
	if l.Trial == "" {
		return l.Scenario
	}
	return l.Scenario + " (" + l.Trial + ")"
}
