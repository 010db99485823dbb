package html

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nethtml "golang.org/x/net/html"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// chromium runs headless Chromium on a page with its own profile and no
// background traffic (REAL-COMPONENTS.md), and returns its stdout and
// stderr (the browser's log, console messages included).
func chromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--window-size=1280,6400"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// consoleLines are the page's console messages in Chromium's log (errors
// thrown by a script show there too).
// screenshot renders page in Chromium and decodes the picture; a message on
// the page's console is an error. With LLMBENCH_KEEP_SCREENSHOT set to a
// directory, the picture is kept there as name.
func screenshot(t *testing.T, bin, page, name string) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), name)
	if dir := os.Getenv("LLMBENCH_KEEP_SCREENSHOT"); dir != "" {
		shot = filepath.Join(dir, name)
	}
	_, log := chromium(t, bin, page, "--screenshot="+shot)
	if c := consoleLines(log); len(c) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(c, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func consoleLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			out = append(out, l)
		}
	}
	return out
}

// TestBrowser opens the golden report in a real headless Chromium: the DOM
// after loading holds every drawn chart, the console stays silent, and a
// screenshot shows the series in their colours.
func TestBrowser(t *testing.T) {
	bin := realtest.Require(t, "chromium", "apt-get install -y chromium")
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	in := goldenRun.input()
	page := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(page, []byte(renderString(t, in)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := build(in)
	want := 0
	for _, c := range allCharts(p) {
		if c.Empty == "" {
			want++
		}
	}

	t.Run("dom", func(t *testing.T) {
		dom, log := chromium(t, bin, page, "--dump-dom")
		doc, err := nethtml.Parse(strings.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		if got := drawnCharts(doc); got != want || want < 8 {
			t.Errorf("the browser's DOM has %d drawn charts, want %d", got, want)
		}
		if bad := selfContained(doc); len(bad) > 0 {
			t.Errorf("the loaded page runs or fetches something: %v", bad)
		}
		if c := consoleLines(log); len(c) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(c, "\n"))
		}
		drawn := drawnIDs(doc)
		for _, id := range newCharts {
			if !drawn[id] {
				t.Errorf("the browser's DOM does not draw chart %s", id)
			}
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		img := screenshot(t, bin, page, "report.png")
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 6400 {
			t.Fatalf("screenshot is %v, want 1280×6400", b)
		}
		// Count pixels of the series colours: the first 6,400 px hold the
		// throughput charts (blue requests, teal tokens), below the answer
		// (verdict, headline figures, capacity chart: decision 0801), the
		// health (one line per validity state), the run's metadata, the
		// sweep's per-point table and charts (a sweep leads with them:
		// decision 0039), the tokens and the latency tables.
		near := func(r, g, b uint32, want [3]uint32) bool {
			d := func(a, b uint32) uint32 { return max(a, b) - min(a, b) }
			return d(r>>8, want[0]) < 24 && d(g>>8, want[1]) < 24 && d(b>>8, want[2]) < 24
		}
		blue, teal, ink := 0, 0, 0
		for y := 0; y < img.Bounds().Dy(); y++ {
			for x := 0; x < img.Bounds().Dx(); x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				switch {
				case near(r, g, b, [3]uint32{0x25, 0x63, 0xeb}):
					blue++
				case near(r, g, b, [3]uint32{0x0d, 0x94, 0x88}):
					teal++
				case r>>8 < 80 && g>>8 < 80 && b>>8 < 80:
					ink++
				}
			}
		}
		t.Logf("pixels: %d blue, %d teal, %d dark", blue, teal, ink)
		if blue < 500 || teal < 500 {
			t.Errorf("the series are not drawn: %d blue and %d teal pixels", blue, teal)
		}
		if ink < 5000 {
			t.Errorf("hardly any text on the page: %d dark pixels", ink)
		}
	})

	// The CDF and sweep sections lie below the first screen: the same page
	// with every other section hidden shows them, and their series must be
	// painted in their colours.
	t.Run("sweep and CDF screenshot", func(t *testing.T) {
		const hide = "section:not(#cdf):not(#sweep), .masthead, .tiles { display: none; }"
		doc := renderString(t, in)
		if !strings.Contains(doc, "</style>") {
			t.Fatal("the page has no style sheet to add to")
		}
		part := filepath.Join(t.TempDir(), "part.html")
		if err := os.WriteFile(part, []byte(strings.Replace(doc, "</style>", hide+"</style>", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		img := screenshot(t, bin, part, "sweep-cdf.png")
		colours := []struct {
			name string
			rgb  [3]uint32
			min  int
		}{
			{"blue (the client's CDFs)", [3]uint32{0x25, 0x63, 0xeb}, 1500},
			{"light teal (the engine's steps)", [3]uint32{0xa6, 0xd8, 0xd3}, 1500},
			{"orange (per-user vs total)", [3]uint32{0xd9, 0x77, 0x06}, 300},
			{"violet (sweep p50s)", [3]uint32{0x7c, 0x3a, 0xed}, 600},
			{"pink (sweep p99s and the knee)", [3]uint32{0xdb, 0x27, 0x77}, 600},
		}
		counts := make([]int, len(colours))
		for y := 0; y < img.Bounds().Dy(); y++ {
			for x := 0; x < img.Bounds().Dx(); x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				for i, c := range colours {
					d := func(a, b uint32) uint32 { return max(a, b) - min(a, b) }
					if d(r>>8, c.rgb[0]) < 20 && d(g>>8, c.rgb[1]) < 20 && d(b>>8, c.rgb[2]) < 20 {
						counts[i]++
					}
				}
			}
		}
		for i, c := range colours {
			t.Logf("%d %s pixels", counts[i], c.name)
			if counts[i] < c.min {
				t.Errorf("%s: %d pixels, want at least %d", c.name, counts[i], c.min)
			}
		}
	})
}
