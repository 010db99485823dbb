package quiet

import (
	"time"

	"github.com/llmbench-org/llmbench/selfmon"
)

// Neighbours measures how much of the machine other processes used while a
// timing-sensitive check ran: the quiet lock only reaches test binaries that
// take it, and `go test ./...` also compiles and links the next packages
// beside the one that runs. A check whose bound is about llmbench can then
// tell "llmbench was late" from "the machine was busy", and say which. The
// measurement is selfmon's, the one a run reports as host_other_cpu.
type Neighbours struct {
	start    selfmon.Sample
	began    time.Time
	children time.Duration // selfmon.ChildrenCPU at the start
}

// WatchNeighbours starts measuring now.
func WatchNeighbours() *Neighbours {
	return &Neighbours{start: selfmon.Take(), began: time.Now(), children: selfmon.ChildrenCPU()}
}

// Share is the fraction of the machine (0–1, all cores) that processes
// other than this one kept busy since WatchNeighbours; ok is false where the
// platform does not say (then the caller cannot tell, and should not guess).
func (n *Neighbours) Share() (share float64, ok bool) {
	r := selfmon.Since(n.start, selfmon.Take())
	return r.HostOtherCPU, r.HostMeasured
}

// ShareBesidesChildren is Share less what this process's children that
// ended since WatchNeighbours used (call it after they were waited for): a
// check that runs its engine apart, in a child process it starts and stops,
// must not take its own engine for a neighbour.
func (n *Neighbours) ShareBesidesChildren() (share float64, ok bool) {
	r := selfmon.Since(n.start, selfmon.Take())
	machine := time.Since(n.began).Seconds() * float64(r.HostCores)
	if !r.HostMeasured || machine <= 0 {
		return 0, false
	}
	children := (selfmon.ChildrenCPU() - n.children).Seconds()
	return max(0, r.HostOtherCPU-children/machine), true
}
