//go:build unix

package quiet

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lock takes the advisory lock, exclusive or shared, polling so that a wait
// is bounded (flock itself either blocks forever or not at all).
func lock(exclusive bool, maxWait time.Duration) (release func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", lockPath, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(maxWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", lockPath, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s still held after %v", lockPath, maxWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
