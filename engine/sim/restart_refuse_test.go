package sim

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestartRefuses: with restart_refuse a restart closes the listener
// (a dial is refused) and every open connection, then listens again on the
// same address after the downtime; Downtimes is the truth of both.
func TestRestartRefuses(t *testing.T) {
	const down = 2 * time.Second // long beside the test's own steps, so "refused now" is not a race
	e, ep := startEngine(t, Config{Faults: Faults{RestartDowntime: down, RestartRefuse: true}})
	u, _ := url.Parse(ep.BaseURL)
	idle, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatalf("dial before the restart: %v", err)
	}
	defer idle.Close()
	waitActive := time.Now().Add(10 * time.Second)
	for e.connCount() == 0 && time.Now().Before(waitActive) {
		time.Sleep(time.Millisecond) // the server tracks the connection once it accepted it
	}
	before := time.Now()
	e.Restart()
	for e.Restarts() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := net.Dial("tcp", u.Host); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial during the downtime: %v, want connection refused", err)
	}
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("an open connection read %v during the downtime: the restart must close it", err)
	}
	var resp *http.Response
	for deadline := time.Now().Add(down + 10*time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get(strings.TrimSuffix(ep.BaseURL, "/v1") + "/health"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the engine never listened again: %v", err)
	}
	resp.Body.Close()
	ds := e.Downtimes()
	if len(ds) != 1 {
		t.Fatalf("%d downtimes, want the one restart's", len(ds))
	}
	if d := ds[0]; d.Start.Before(before) || d.Length() < down || d.End.After(time.Now()) {
		t.Errorf("downtime %v for %v: want it to start at the restart and last at least %v", d.Start.Sub(before), d.Length(), down)
	}
}

func (e *Engine) connCount() int {
	e.connsMu.Lock()
	defer e.connsMu.Unlock()
	return len(e.conns)
}

func TestRestartRefuseNeedsDowntime(t *testing.T) {
	err := Faults{RestartRefuse: true}.Validate()
	if err == nil || !strings.Contains(err.Error(), "restart_refuse needs a restart_downtime") {
		t.Errorf("Validate: %v, want restart_refuse without a downtime refused", err)
	}
}
