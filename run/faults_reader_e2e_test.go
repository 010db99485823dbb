package run

// Every file a run reads, bounded before it is read (issue 21 item 2).
func readerFaultCases() []faultCase {
	return nil
}
