package html

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// layoutProbe measures the laid-out page in the browser and writes what it
// found into the DOM, where --dump-dom brings it back: every element whose
// box pokes out of the viewport sideways (an element inside a box that
// scrolls on its own is measured against that box), and the bottom edge of
// the verdict, the headline figures and the capacity chart. It is added
// only to the test's copy of the page: the report itself runs no script.
const layoutProbe = `<script>
(function () {
  var W = window.innerWidth, wide = [], seen = 0;
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var el = all[i];
    if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
    var clip = el.parentElement && el.parentElement.closest('.table-wrap');
    var left = 0, right = W;
    if (clip) { var c = clip.getBoundingClientRect(); left = c.left; right = c.right; }
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    seen++;
    if (r.right > right + 0.5 || r.left < left - 0.5) {
      wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') +
        ' [' + Math.round(r.left) + ',' + Math.round(r.right) + '] ' + (el.textContent || '').trim().slice(0, 40));
    }
  }
  var wraps = document.querySelectorAll('.table-wrap'), scrolls = [];
  for (var j = 0; j < wraps.length; j++) {
    if (wraps[j].scrollWidth > wraps[j].clientWidth + 1) scrolls.push((wraps[j].textContent || '').trim().slice(0, 40));
  }
  function bottom(sel) { var e = document.querySelector(sel); return e ? e.getBoundingClientRect().bottom : -1; }
  var out = document.createElement('pre');
  out.id = 'layout-probe';
  out.textContent = JSON.stringify({width: W, pageWidth: document.documentElement.scrollWidth, seen: seen, wide: wide.slice(0, 20),
    scrolls: scrolls, verdict: bottom('#verdict'), headline: bottom('#headline'), capacity: bottom('#answer .capacity figure')});
  document.body.appendChild(out);
})();
</script>`

type layoutResult struct {
	Width, PageWidth, Seen      int
	Wide, Scrolls               []string
	Verdict, Headline, Capacity float64
}

// probeLayout opens page at width×height in Chromium with the probe added.
func probeLayout(t *testing.T, bin, doc string, width, height int) layoutResult {
	t.Helper()
	if !strings.Contains(doc, "</body>") {
		t.Fatal("the page has no body to add the probe to")
	}
	page := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(page, []byte(strings.Replace(doc, "</body>", layoutProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := chromium(t, bin, page, "--dump-dom", fmt.Sprintf("--window-size=%d,%d", width, height))
	i := strings.Index(dom, `<pre id="layout-probe">`)
	if i < 0 {
		t.Fatalf("the probe wrote nothing: the script did not run")
	}
	raw := dom[i+len(`<pre id="layout-probe">`):]
	raw = raw[:strings.Index(raw, "</pre>")]
	raw = strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(raw)
	var r layoutResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("probe: %v\n%s", err, raw)
	}
	return r
}

// TestLayout lays the report out in Chromium at 1,280 and 1,920 px wide
// (issue 25): no element is wider than the viewport, and the first 800 px
// hold the verdict, the headline figures and, for a sweep, its capacity
// chart (decision 0801).
func TestLayout(t *testing.T) {
	bin := realtest.Require(t, "chromium", "apt-get install -y chromium")
	t.Parallel()
	quiet.Busy(t)
	docs := map[string]string{
		"sweep":      renderString(t, goldenRun.input()),
		"no metrics": renderString(t, synth{seed: 7, rateScale: 0.5, stretch: 1, chunks: 4, noMetrics: true}.input()),
	}
	for name, doc := range docs {
		for _, width := range []int{1280, 1920} {
			t.Run(fmt.Sprintf("%s at %d px", name, width), func(t *testing.T) {
				r := probeLayout(t, bin, doc, width, 800)
				t.Logf("%+v", r)
				if r.Seen < 200 {
					t.Fatalf("the probe measured only %d elements", r.Seen)
				}
				if r.PageWidth > width || len(r.Wide) > 0 {
					t.Errorf("the page is %d px wide in a %d px window; elements wider than the viewport:\n%s", r.PageWidth, width, strings.Join(r.Wide, "\n"))
				}
				if len(r.Scrolls) > 0 {
					t.Errorf("tables that need a scroll bar at %d px: %q", width, r.Scrolls)
				}
				for _, e := range []struct {
					what   string
					bottom float64
				}{{"the verdict", r.Verdict}, {"the headline figures", r.Headline}} {
					if e.bottom <= 0 || e.bottom > 800 {
						t.Errorf("%s ends at y=%.0f, want within the first 800 px", e.what, e.bottom)
					}
				}
				if name == "sweep" && (r.Capacity <= 0 || r.Capacity > 800) {
					t.Errorf("the sweep's capacity chart ends at y=%.0f, want within the first 800 px", r.Capacity)
				}
			})
		}
	}
}
