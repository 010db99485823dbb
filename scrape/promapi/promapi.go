// Package promapi reads an engine fleet's metrics from the Prometheus server
// that already scrapes it, through its HTTP API (instant and range queries),
// instead of scraping every replica: what a sharded run on Kubernetes uses.
// The samples are turned back into metric families so the same scrape
// dialects map them; the fleet is summed and each replica kept apart.
package promapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/llmbench-org/llmbench/scrape"
)

// Source is a Prometheus server and the series of one engine fleet in it.
type Source struct {
	URL      string        // the server's base URL, e.g. http://127.0.0.1:9090
	Selector string        // extra PromQL label matchers without braces, e.g. `job="sglang",namespace="llm"`; "" = none
	Dialect  string        // a scrape dialect name; "" or scrape.Auto detects from the names
	By       string        // the label that tells replicas apart; "" = "instance"
	Timeout  time.Duration // per query; 0 = scrape.DefaultTimeout
	Client   *http.Client  // nil = http.DefaultClient
	// FreshWait bounds how long a round (ScrapeRows) waits for Prometheus to
	// scrape every replica after the round began: until then it holds only
	// samples of earlier scrapes, up to one scrape interval old, and a
	// phase's closing snapshot read from them misses the phase's last
	// requests. 0 = DefaultFreshWait; negative = do not wait (the round
	// reads whatever Prometheus holds).
	FreshWait time.Duration
}

// Freshness defaults: DefaultFreshWait covers Prometheus's default scrape
// interval (1 m) and a scrape timeout; a round polls every freshEvery for
// a newer sample, with one tiny query (one metric's sample timestamps).
const (
	DefaultFreshWait = 75 * time.Second
	freshEvery       = 100 * time.Millisecond
)

// Sample is the fleet at one evaluation time.
type Sample struct {
	At       time.Time                  `json:"at"`
	Sum      scrape.Snapshot            `json:"sum"`      // every replica together
	Replicas map[string]scrape.Snapshot `json:"replicas"` // by the value of Source.By ("" for series without it)
	// Scraped is when the data was true: the oldest of the replicas' newest
	// sample times, on llmbench's clock (InstantAfter only; zero otherwise).
	Scraped time.Time `json:"scraped,omitzero"`
}

// Query is the PromQL the source sends: every series of the dialect's
// metric names that matches the selector.
func (s Source) Query() (string, error) {
	pat, err := scrape.MetricNamePattern(s.Dialect)
	if err != nil {
		return "", err
	}
	q := `{__name__=~"` + strings.ReplaceAll(pat, `\`, `\\`) + `"`
	if sel := strings.TrimSpace(s.Selector); sel != "" {
		q += "," + sel
	}
	return q + "}", nil
}

// Instant evaluates the query at one time (zero: the server's now). A series
// is there when it had a sample within the server's lookback (5 minutes by
// default) and its target was not marked down since.
func (s Source) Instant(ctx context.Context, at time.Time) (Sample, error) {
	q, err := s.Query()
	if err != nil {
		return Sample{}, err
	}
	when, series, err := s.vector(ctx, q, at)
	if err != nil {
		return Sample{}, err
	}
	return s.sample(when, series)
}

// vector runs an instant query (at zero: the server's now) and returns its
// evaluation time (the points' timestamp; at itself when there is none) and
// its series, each point's value being the series' latest sample.
func (s Source) vector(ctx context.Context, q string, at time.Time) (time.Time, []series, error) {
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", formatTime(at))
	}
	var res struct {
		Type   string `json:"resultType"`
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]json.RawMessage
		} `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", v, &res); err != nil {
		return time.Time{}, nil, err
	}
	if res.Type != "vector" {
		return time.Time{}, nil, fmt.Errorf("prometheus %s: instant query returned a %q, want a vector", s.URL, res.Type)
	}
	var series []series
	when := at
	for _, r := range res.Result {
		t, val, err := parsePoint(r.Value)
		if err != nil {
			return time.Time{}, nil, fmt.Errorf("prometheus %s: series %v: %w", s.URL, r.Metric, err)
		}
		if when.IsZero() || t.After(when) {
			when = t
		}
		series = append(series, seriesOf(r.Metric, val))
	}
	return when, series, nil
}

// Range evaluates the query at every step from start to end, one Sample per
// evaluation time that has any series, in time order. The server refuses
// more than 11,000 steps per series.
func (s Source) Range(ctx context.Context, start, end time.Time, step time.Duration) ([]Sample, error) {
	if step <= 0 || end.Before(start) {
		return nil, fmt.Errorf("prometheus %s: bad range %v … %v step %v", s.URL, start, end, step)
	}
	q, err := s.Query()
	if err != nil {
		return nil, err
	}
	v := url.Values{"query": {q}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	var res struct {
		Type   string `json:"resultType"`
		Result []struct {
			Metric map[string]string    `json:"metric"`
			Values [][2]json.RawMessage `json:"values"`
		} `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query_range", v, &res); err != nil {
		return nil, err
	}
	if res.Type != "matrix" {
		return nil, fmt.Errorf("prometheus %s: range query returned a %q, want a matrix", s.URL, res.Type)
	}
	byTime := map[int64][]series{}
	for _, r := range res.Result {
		for _, p := range r.Values {
			t, val, err := parsePoint(p)
			if err != nil {
				return nil, fmt.Errorf("prometheus %s: series %v: %w", s.URL, r.Metric, err)
			}
			byTime[t.UnixMilli()] = append(byTime[t.UnixMilli()], seriesOf(r.Metric, val))
		}
	}
	times := make([]int64, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	out := make([]Sample, 0, len(times))
	for _, t := range times {
		smp, err := s.sample(time.UnixMilli(t).UTC(), byTime[t])
		if err != nil {
			return nil, err
		}
		out = append(out, smp)
	}
	return out, nil
}

// sample maps the series of one evaluation time, summed and per replica.
func (s Source) sample(at time.Time, all []series) (Sample, error) {
	d, err := scrape.DialectFor(s.Dialect)
	if err != nil {
		return Sample{}, err
	}
	by := s.By
	if by == "" {
		by = "instance"
	}
	out := Sample{At: at, Sum: d.Map(families(all)), Replicas: map[string]scrape.Snapshot{}}
	groups := map[string][]series{}
	for _, x := range all {
		groups[x.labels[by]] = append(groups[x.labels[by]], x)
	}
	for replica, ss := range groups {
		out.Replicas[replica] = d.Map(families(ss))
	}
	return out, nil
}

// get calls one API endpoint and decodes its data field into dst.
func (s Source) get(ctx context.Context, path string, params url.Values, dst any) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = scrape.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(s.URL, "/") + path + "?" + params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("prometheus %s: %w", s.URL, err)
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus %s%s: %w", s.URL, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, scrape.MaxBody+1))
	if err != nil {
		return fmt.Errorf("prometheus %s%s: read: %w", s.URL, path, err)
	}
	if len(body) > scrape.MaxBody {
		// Cut, it would only fail as JSON; say why instead.
		return fmt.Errorf("prometheus %s%s: %w", s.URL, path, scrape.ErrBodyTooLarge)
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("prometheus %s%s: HTTP %d, not an API response: %w", s.URL, path, resp.StatusCode, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("prometheus %s%s: HTTP %d: %s: %s", s.URL, path, resp.StatusCode, env.ErrorType, env.Error)
	}
	if err := json.Unmarshal(env.Data, dst); err != nil {
		return fmt.Errorf("prometheus %s%s: decode data: %w", s.URL, path, err)
	}
	return nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// parsePoint reads a [unix seconds, "value"] pair.
func parsePoint(p [2]json.RawMessage) (time.Time, float64, error) {
	var secs float64
	if err := json.Unmarshal(p[0], &secs); err != nil {
		return time.Time{}, 0, fmt.Errorf("timestamp %s: %w", p[0], err)
	}
	var s string
	if err := json.Unmarshal(p[1], &s); err != nil {
		return time.Time{}, 0, fmt.Errorf("value %s: %w", p[1], err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("value %q: %w", s, err)
	}
	return time.UnixMilli(int64(math.Round(secs * 1000))).UTC(), v, nil
}

// series is one sample of one series: its name, other labels and value.
type series struct {
	name   string
	labels map[string]string // without __name__
	value  float64
}

func seriesOf(metric map[string]string, v float64) series {
	labels := make(map[string]string, len(metric))
	for k, val := range metric {
		if k != "__name__" {
			labels[k] = val
		}
	}
	return series{name: metric["__name__"], labels: labels, value: v}
}

// families rebuilds metric families from flat samples, as the exposition
// had them: a name with `_bucket` series carrying `le` becomes a histogram
// (with its `_sum` and `_count`), everything else is untyped, which the
// dialects read as counters or gauges by name.
func families(all []series) []*dto.MetricFamily {
	isHist := map[string]bool{}
	for _, x := range all {
		if base, ok := strings.CutSuffix(x.name, "_bucket"); ok {
			if _, hasLE := x.labels["le"]; hasLE {
				isHist[base] = true
			}
		}
	}
	type histKey struct{ base, sig string }
	hists := map[histKey]*dto.Metric{}
	byName := map[string]*dto.MetricFamily{}
	family := func(name string, typ dto.MetricType) *dto.MetricFamily {
		f := byName[name]
		if f == nil {
			f = &dto.MetricFamily{Name: proto.String(name), Type: typ.Enum()}
			byName[name] = f
		}
		return f
	}
	for _, x := range all {
		base, role := histogramRole(x.name, isHist)
		if role == "" {
			f := family(x.name, dto.MetricType_UNTYPED)
			f.Metric = append(f.Metric, &dto.Metric{Label: labelPairs(x.labels, ""), Untyped: &dto.Untyped{Value: proto.Float64(x.value)}})
			continue
		}
		key := histKey{base, signature(x.labels, "le")}
		m := hists[key]
		if m == nil {
			m = &dto.Metric{Label: labelPairs(x.labels, "le"), Histogram: &dto.Histogram{}}
			hists[key] = m
			f := family(base, dto.MetricType_HISTOGRAM)
			f.Metric = append(f.Metric, m)
		}
		switch role {
		case "bucket":
			le, err := strconv.ParseFloat(x.labels["le"], 64)
			if err != nil {
				continue
			}
			m.Histogram.Bucket = append(m.Histogram.Bucket, &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCountFloat: proto.Float64(x.value)})
		case "sum":
			m.Histogram.SampleSum = proto.Float64(x.value)
		case "count":
			m.Histogram.SampleCountFloat = proto.Float64(x.value)
		}
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func histogramRole(name string, isHist map[string]bool) (base, role string) {
	for _, r := range []string{"bucket", "sum", "count"} {
		if b, ok := strings.CutSuffix(name, "_"+r); ok && isHist[b] {
			return b, r
		}
	}
	return "", ""
}

func labelPairs(labels map[string]string, skip string) []*dto.LabelPair {
	names := make([]string, 0, len(labels))
	for k := range labels {
		if k != skip {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]*dto.LabelPair, len(names))
	for i, k := range names {
		out[i] = &dto.LabelPair{Name: proto.String(k), Value: proto.String(labels[k])}
	}
	return out
}

func signature(labels map[string]string, skip string) string {
	var b strings.Builder
	for _, p := range labelPairs(labels, skip) {
		b.WriteString(p.GetName())
		b.WriteByte(0xff)
		b.WriteString(p.GetValue())
		b.WriteByte(0xfe)
	}
	return b.String()
}
