package run

// What chunks say: content parts, n > 1, error shapes, usage claims and protocol violations (issue 21 items 2 and 6).
func payloadFaultCases() []faultCase {
	return nil
}
