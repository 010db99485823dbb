//go:build unix

package selfmon

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration { return rusageCPU(syscall.RUSAGE_SELF) }

// ChildrenCPU is the CPU time (user + system) of this process's children
// that ended and were waited for, and of theirs: an engine a test ran apart
// and stopped, which is not a neighbour of the test's.
func ChildrenCPU() time.Duration { return rusageCPU(syscall.RUSAGE_CHILDREN) }

func rusageCPU(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
