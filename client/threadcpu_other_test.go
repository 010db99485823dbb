//go:build !unix

package client

// threadCPU is not measured off unix: the benchmark's cpu-ns/op reads 0.
func threadCPU() int64 { return 0 }
