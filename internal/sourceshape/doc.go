// Package sourceshape holds tests that read the module's own source and hold
// it to the house's shape (docs/decisions/0027): no non-test function longer
// than a newcomer can read in one screen or two. It has no code of its own;
// the import shape, which needs `go list`, is run/shape_test.go's.
package sourceshape
