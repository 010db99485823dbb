package sim

// WireFaults are framings of a response that real servers, gateways and
// proxies send and a client must read as the same stream. The zero value
// frames as the engine's dialect does.
type WireFaults struct{}

func (w WireFaults) validate() error { return nil }
