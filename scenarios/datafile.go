package scenarios

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The bounds on what a scenario makes llmbench read whole. A data file is
// read into memory before its lines are parsed, so its size is checked
// before a byte is read: /dev/zero named as a dataset once passed 2.5 GB in
// two seconds. The largest public prompt sets (ShareGPT's 673 MB of JSON)
// fit well inside MaxDataFileBytes.
const (
	MaxScenarioFileBytes = 16 << 20 // a scenario YAML file
	MaxDataFileBytes     = 2 << 30  // a dataset, trace or length file
)

// readBounded reads the regular file at path whole, refusing what is not a
// regular file (a named pipe would block the open until someone writes, a
// device never ends) and a file above limit, each named with the path; what
// is the file's kind ("scenario file", "data file") for the message.
func readBounded(path, what string, limit int64) ([]byte, error) {
	if err := readable(path, what, limit); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown since the stat: the bound holds on what is
	// read, not on what was stat'ed.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s %s grew past the %d-byte bound on a %s while it was read", what, path, limit, what)
	}
	return data, nil
}

// readable checks, from a stat alone, that path is a regular file within
// limit bytes.
func readable(path, what string, limit int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := regular(path, what, st); err != nil {
		return err
	}
	if st.Size() > limit {
		return fmt.Errorf("%s %s is %d bytes, over the %d-byte bound on a %s", what, path, st.Size(), limit, what)
	}
	return nil
}

// regular refuses what is not a regular file, naming its kind.
func regular(path, what string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s %s is %s: llmbench reads a %s whole, so it must be a regular file (copy it to one)", what, path, kind, what)
}
