package launch

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/engines"
)

// kindSpec is what a kind of engine implies.
type kindSpec struct {
	argv        []string // default command line, with placeholders
	dialect     string   // metric dialect ("" = detect)
	readyPath   string   // answers 200 once the engine serves requests
	metricsPort bool     // /metrics is served on a port of its own
}

// Kinds returns the kinds Config.Kind accepts: every engine family that
// says how it is launched (package engines), then KindCommand.
func Kinds() []string { return append(engines.Launchable(), KindCommand) }

// specFor reads a kind's conventions from its engine family (each family's
// file says where they come from; docs/decisions/0850-launch.md).
func specFor(kind string) (kindSpec, error) {
	if kind == KindCommand {
		// Any OpenAI-compatible server lists its models; few agree on a health path.
		return kindSpec{readyPath: "/v1/models"}, nil
	}
	f, err := engines.Lookup(kind)
	if err != nil || f.Launch == nil {
		kinds := Kinds()
		return kindSpec{}, fmt.Errorf("launch: engine kind %q: want %s or %s",
			kind, strings.Join(kinds[:len(kinds)-1], ", "), kinds[len(kinds)-1])
	}
	return kindSpec{argv: f.Launch.Argv, dialect: f.Name, readyPath: f.Launch.ReadyPath, metricsPort: f.Launch.MetricsPort}, nil
}
