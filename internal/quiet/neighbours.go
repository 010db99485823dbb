package quiet

import "time"

// Neighbours measures how much of the machine other processes used while a
// timing-sensitive check ran: the quiet lock only reaches test binaries that
// take it, and `go test ./...` also compiles and links the next packages
// beside the one that runs. A check whose bound is about llmbench can then
// tell "llmbench was late" from "the machine was busy", and say which.
type Neighbours struct {
	start    time.Time
	busy     float64 // CPU-seconds the whole machine spent busy
	self     float64 // CPU-seconds this process used
	cores    int
	measured bool
}

// WatchNeighbours starts measuring now.
func WatchNeighbours() *Neighbours {
	n := &Neighbours{start: time.Now()}
	n.busy, n.self, n.cores, n.measured = machineCPU()
	return n
}

// Share is the fraction of the machine (0–1, all cores) that processes
// other than this one kept busy since WatchNeighbours; ok is false where the
// platform does not say (then the caller cannot tell, and should not guess).
func (n *Neighbours) Share() (share float64, ok bool) {
	busy, self, cores, measured := machineCPU()
	wall := time.Since(n.start).Seconds()
	if !n.measured || !measured || cores == 0 || wall <= 0 {
		return 0, false
	}
	others := (busy - n.busy) - (self - n.self)
	return max(0, others/(wall*float64(cores))), true
}
