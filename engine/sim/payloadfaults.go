package sim

// PayloadFaults change what a stream's chunks say: shapes a client must read
// (content as parts arrays, errors in any shape) and violations it must flag
// rather than use (usage claims beyond the request, chunks after
// finish_reason). The zero value sends the dialect's own chunks.
type PayloadFaults struct{}

func (p PayloadFaults) validate() error { return nil }
