package sim

import (
	"slices"
	"testing"
	"time"
)

func TestPresets(t *testing.T) {
	t.Parallel()
	names := PresetNames()
	if len(names) < 3 || !slices.Contains(names, "tiny") || !slices.Contains(names, DefaultPreset) {
		t.Fatalf("presets %v: want at least 3 including tiny and the default", names)
	}
	for _, name := range names {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	def, _ := Preset("")
	named, _ := Preset(DefaultPreset)
	if def != named {
		t.Error(`Preset("") is not the default preset`)
	}
	if _, err := Preset("nope"); err == nil {
		t.Error("unknown preset accepted")
	}
	// The physical presets: a single stream decodes at tens to hundreds of
	// tokens per second, and the KV cache holds at least one full context.
	for _, name := range []string{"h200-llama3-8b", "h100x4-llama3-70b"} {
		p, _ := Preset(name)
		perToken := p.DecodeBase + p.DecodePerSeq
		if perToken < 3*time.Millisecond || perToken > 50*time.Millisecond {
			t.Errorf("%s: single-stream pass %v is not physical", name, perToken)
		}
		if p.KVCapacityTokens() < p.MaxModelLen {
			t.Errorf("%s: KV %d tokens < context %d", name, p.KVCapacityTokens(), p.MaxModelLen)
		}
	}
}
