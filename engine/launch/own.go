package launch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// launchIDEnv is put in the environment of every engine llmbench launches,
// with a random value of its own per launch: every process the engine starts
// inherits it, also one that leaves the engine's process group (setsid, a
// daemon's double fork, nohup … &), so it is what proves such a process is
// this launch's (docs/decisions/0852). It is no secret: it says only which
// launch a process belongs to.
const launchIDEnv = "LLMBENCH_LAUNCH_ID"

// newLaunchID is 128 random bits: no other process carries it by chance.
func newLaunchID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// member is a process looked at as possibly the engine's.
type member struct {
	pid   int
	start uint64 // clock ticks after boot (Linux), with pid its identity
	comm  string
	pgrp  int
	// ours says why it is provably the engine's ("" when it is not), why
	// not says why it is not provably the engine's.
	ours, whyNot string
}

// String names the process for people: "pid 123 (vllm)".
func (m member) String() string {
	if m.comm == "" {
		return fmt.Sprintf("pid %d", m.pid)
	}
	return fmt.Sprintf("pid %d (%s)", m.pid, m.comm)
}

// names lists processes for a message.
func names(ms []member) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	return strings.Join(s, ", ")
}
