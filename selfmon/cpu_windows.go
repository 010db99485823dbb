//go:build windows

package selfmon

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + kernel) the process has used.
func processCPU() time.Duration {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	// Filetime counts 100 ns intervals; as a duration it is not since 1601.
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}

// ChildrenCPU is not measured on Windows (nothing here needs it there).
func ChildrenCPU() time.Duration { return 0 }
