//go:build !unix

package quiet

import "time"

// selfCPU is not measured here (the spinning child runs on Linux only).
func selfCPU() time.Duration { return 0 }
