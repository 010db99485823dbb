//go:build !linux

package launch

import (
	"errors"
	"syscall"
)

// Without /proc there is no reading another process's environment or which
// process holds a port: nothing outside the engine's group is ever taken for
// the engine's, so nothing outside it is ever stopped.

func startTicks(int) uint64 { return 0 }

func escaped(string, int, uint64) []member { return nil }

func judge(m *member, _ string, _ int, _ uint64) {
	m.whyNot = "this system cannot tell whose it is"
}

func listeners(int) ([]member, []string, error) {
	return nil, nil, errors.New("this system cannot tell which process holds a port")
}

func (m member) alive() bool { return false }

func (m member) signal(syscall.Signal) {}

func cmdline(int) []string { return nil }
