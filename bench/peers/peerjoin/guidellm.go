package main

import "io"

func readGuideLLM(r io.Reader) ([]measured, error) { return nil, nil }
