package client

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a Do that
// leaked its reader, drain timer or connection would show up here.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
