package quiet

import (
	"syscall"
	"time"
)

// childrenCPU is the CPU time of this process's children that ended and were
// waited for (and of theirs): an engine a test ran apart and stopped.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
