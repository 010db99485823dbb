package run

// Outages, back-off and stalled streams (issue 21 item 7).
func outageFaultCases() []faultCase {
	return nil
}
