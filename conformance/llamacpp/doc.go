// Package llamacpp holds the conformance tests of the built-in engine's
// llama.cpp dialect against a real llama-server (built from the llama.cpp
// sources that PyPI's llama-cpp-python sdist vendors) serving a tiny
// random-weight GGUF written with PyPI's gguf package: every fact the dialect
// emulates (metric families and the moment each counter moves, /tokenize,
// /apply-template, /props, ids, stream shapes and the parser's error event,
// connection closes, the per-slot context, logit_bias) is probed on both
// engines with the same code and compared, and an llmbench run against the
// real server must conserve requests and tokens exactly. The package has no
// code of its own: its tests need .ci/real-llamacpp/install (decision 2200),
// and skip without it, or fail under LLMBENCH_REQUIRE_REAL=1.
package llamacpp
