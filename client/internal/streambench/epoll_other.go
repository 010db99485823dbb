//go:build unix && !linux

package main

import (
	"context"
	"errors"
)

func epollLoop(context.Context, string, options, *window, []tally) (int64, int64, error) {
	return 0, 0, errors.New("loop epoll needs Linux")
}
