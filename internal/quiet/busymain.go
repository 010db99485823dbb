package quiet

import (
	"fmt"
	"os"
	"time"
)

// BusyMain is Busy for a whole test binary, called from TestMain: a package
// whose tests share one process that loads the machine for minutes (a real
// engine started once, conformance/vllm) holds the lock shared from before
// the process starts until release, so a test that needs quiet does not
// run beside it.
func BusyMain() (release func()) {
	release, err := lock(false, 5*time.Minute)
	if err != nil {
		fmt.Fprintf(os.Stderr, "quiet: %v\n", err)
		return func() {}
	}
	return release
}
