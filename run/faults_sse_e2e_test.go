package run

// The SSE framings and content codings real servers, gateways and proxies send (issue 21 item 6).
func sseFaultCases() []faultCase {
	return nil
}
