//go:build unix

package client

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread has used, in nanoseconds; the
// benchmark locks its goroutine to the thread (LockOSThread) for the figure
// to be its own.
func threadCPU() int64 {
	runtime.LockOSThread()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
