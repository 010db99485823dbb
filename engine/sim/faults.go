package sim

// Faults are deliberate misbehaviours, for testing a client's error
// handling. The zero value injects none.
type Faults struct{}
