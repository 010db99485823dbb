//go:build windows

package launch

import (
	"os/exec"
	"strconv"
	"syscall"
)

// sysProcAttr starts the engine in a console process group of its own, so
// that a Ctrl-C on llmbench's console reaches llmbench alone, which then
// stops the engine in order. Windows has no parent-death signal: an engine
// outlives a llmbench that is killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// stillActive is GetExitCodeProcess's answer for a running process.
const stillActive = 259

// groupAlive reports whether the engine's first process still runs. Windows
// has no process groups to ask about; the children it started are ended
// with it by taskkill /T (signalGroup).
func groupAlive(pid int) bool {
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return true // cannot tell: assume the worst
	}
	return code == stillActive
}

// generateConsoleCtrlEvent sends a console control event to a process group.
var generateConsoleCtrlEvent = syscall.NewLazyDLL("kernel32.dll").NewProc("GenerateConsoleCtrlEvent")

// signalGroup asks the engine to stop with CTRL_BREAK, which a console
// program (Go's os.Interrupt, Python's KeyboardInterrupt) takes as Ctrl-C,
// for SIGTERM; for SIGKILL, or when there is no console to send it through,
// taskkill /F /T ends the process and the children it started.
func signalGroup(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		if r, _, _ := generateConsoleCtrlEvent.Call(syscall.CTRL_BREAK_EVENT, uintptr(pid)); r != 0 {
			return nil
		}
	}
	return exec.Command("taskkill", "/F", "/T", "/PID", strconv.Itoa(pid)).Run()
}
