package run

// Launched engines: engine.log bounds and daemonizing commands (issue 21 item 8).
func launchFaultCases() []faultCase {
	return nil
}
