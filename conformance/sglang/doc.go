// Package sglang holds the conformance tests of the built-in engine's
// SGLang dialect against a real SGLang (PyPI's sglang, run on its generic
// torch path on the CPU) serving the same tiny random-weight model as the
// vLLM tests: metric family names and types, the per-request metrics export
// (--export-metrics-to-file) and the shape of a stream are probed on both
// engines with the same code and compared. The package has no code of its
// own: its tests need .ci/real-sglang/install (decision 2230), and skip
// without it, or fail under LLMBENCH_REQUIRE_REAL=1.
package sglang
