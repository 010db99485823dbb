//go:build !linux

package launch

import "fmt"

// groupIdentity records only the group id: there is no portable way to tell
// this group from a later one given the same number.
func groupIdentity(pgid int) leftover { return leftover{pgid: pgid} }

// killLeftover kills nothing: without the group's identity a process group
// (Windows: a process) that now has the recorded number may be someone
// else's, so the user is told which one to look at.
func killLeftover(l leftover) error {
	return fmt.Errorf("cannot check on this system that it is still the engine's: look at process group %d and end it yourself", l.pgid)
}
