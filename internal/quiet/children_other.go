//go:build !linux

package quiet

import "time"

// childrenCPU is not needed off Linux: other processes' share is not
// measured there (Neighbours.Share says so).
func childrenCPU() time.Duration { return 0 }
