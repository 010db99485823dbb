package launch

import (
	"fmt"
	"net"
	"strconv"
)

// freePorts picks n distinct free TCP ports on host by binding port 0; the
// listeners are held until all are picked, then closed for the engine to
// bind. Another process could take one in between: the engine then fails to
// bind, exits, and Start says so with its output.
func freePorts(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portFree checks that nothing listens on host:port, so that a readiness
// probe cannot be answered by another server that holds it.
func portFree(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d on %s is not free%s (another engine running? llmbench leaves it alone): %w", port, host, heldBy(port), err)
	}
	return l.Close()
}
