// Package race says whether the binary was built with the race detector, so
// that a test can leave out what the detector makes meaningless: allocation
// counts (under -race sync.Pool drops a quarter of what is put back, on
// purpose, and the detector's shadow bookkeeping may allocate) and timing
// bounds (every memory access is instrumented, several times slower). It is
// imported by tests only.
package race
