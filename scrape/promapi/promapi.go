// Package promapi reads an engine fleet's metrics from the Prometheus server
// that already scrapes it, through its HTTP API (instant and range queries),
// instead of scraping every replica: what a sharded run on Kubernetes uses.
// The samples are turned back into metric families so the same scrape
// dialects map them; the fleet is summed and each replica kept apart.
package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/scrape"
)

// Source is a Prometheus server and the series of one engine fleet in it.
type Source struct {
	URL      string        // the server's base URL, e.g. http://127.0.0.1:9090
	Selector string        // extra PromQL label matchers without braces, e.g. `job="sglang",namespace="llm"`; "" = none
	Dialect  string        // a scrape dialect name; "" or scrape.Auto detects from the names
	By       string        // the label that tells replicas apart; "" = "instance"
	Timeout  time.Duration // per query; 0 = scrape.DefaultTimeout
	Client   *http.Client  // its settings and transport; nil = http.DefaultTransport
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
	val, err := s.query(ctx, pathQuery, func(ctx context.Context, c v1.API) (model.Value, v1.Warnings, error) {
		v, warn, _, err := c.Query(ctx, q, at)
		return v, warn, err
	})
	if err != nil {
		return time.Time{}, nil, err
	}
	vec, ok := val.(model.Vector)
	if !ok {
		return time.Time{}, nil, fmt.Errorf("prometheus %s: instant query returned a %q, want a vector", s.URL, typeOf(val))
	}
	var out []series
	when := at
	for _, smp := range vec {
		if smp.Histogram != nil {
			return time.Time{}, nil, fmt.Errorf("prometheus %s: series %v: a native histogram, which llmbench does not read", s.URL, smp.Metric)
		}
		t := timeOf(smp.Timestamp)
		if when.IsZero() || t.After(when) {
			when = t
		}
		out = append(out, seriesOf(smp.Metric, float64(smp.Value)))
	}
	return when, out, nil
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
	val, err := s.query(ctx, pathQueryRange, func(ctx context.Context, c v1.API) (model.Value, v1.Warnings, error) {
		v, warn, _, err := c.QueryRange(ctx, q, v1.Range{Start: start, End: end, Step: step})
		return v, warn, err
	})
	if err != nil {
		return nil, err
	}
	mat, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("prometheus %s: range query returned a %q, want a matrix", s.URL, typeOf(val))
	}
	byTime := map[int64][]series{}
	for _, stream := range mat {
		// A native histogram's points (stream.Histograms) are not read:
		// the dialects know classic histograms only.
		for _, p := range stream.Values {
			t := int64(p.Timestamp)
			byTime[t] = append(byTime[t], seriesOf(stream.Metric, float64(p.Value)))
		}
	}
	times := make([]int64, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	out := make([]Sample, 0, len(times))
	for _, t := range times {
		smp, err := s.sample(timeOf(model.Time(t)), byTime[t])
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

// The API endpoints the source calls, named in its errors.
const (
	pathQuery      = "/api/v1/query"
	pathQueryRange = "/api/v1/query_range"
)

// query runs one call of client_golang's API client against the server,
// within Timeout, and names the server, the endpoint and the HTTP status in
// its errors. The client is built for the call: its transport (bounded)
// caps the answer at scrape.MaxBody and notes the status.
func (s Source) query(ctx context.Context, path string, call func(context.Context, v1.API) (model.Value, v1.Warnings, error)) (model.Value, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = scrape.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hc := http.Client{}
	if s.Client != nil {
		hc = *s.Client
	}
	bt := &bounded{base: hc.Transport}
	if bt.base == nil {
		bt.base = httppolicy.Transport(0) // direct, as every request llmbench makes
	}
	if hc.CheckRedirect == nil {
		hc.CheckRedirect = httppolicy.NoRedirect
	}
	hc.Transport = bt
	c, err := api.NewClient(api.Config{Address: s.URL, Client: &hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", s.URL, err)
	}
	// Warnings (a partial answer from a federated or remote-read
	// source) are not errors: the series that came are read.
	val, _, err := call(ctx, v1.NewAPI(c))
	if err != nil {
		return nil, s.callError(path, bt.status, err)
	}
	return val, nil
}

// callError names the server, the endpoint and, where one came, the HTTP
// status and what the server said. The API client reports an answer that
// is not the API's own (a proxy's page, or Prometheus's status other than
// 400 and 422) by its status only, with the body as the error's Detail:
// the body is read here for the API's error, or said not to be one.
func (s Source) callError(path string, status int, err error) error {
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("prometheus %s%s: %w", s.URL, path, err) // no answer, a cut one, or too large
	}
	if apiErr.Detail == "" {
		return fmt.Errorf("prometheus %s%s: HTTP %d: %w", s.URL, path, status, err)
	}
	var env struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
	}
	if jsonErr := json.Unmarshal([]byte(apiErr.Detail), &env); jsonErr != nil || env.Status != "error" {
		if jsonErr == nil {
			jsonErr = fmt.Errorf("status %q", env.Status)
		}
		return fmt.Errorf("prometheus %s%s: HTTP %d, not an API response: %w", s.URL, path, status, jsonErr)
	}
	return fmt.Errorf("prometheus %s%s: HTTP %d: %s: %s", s.URL, path, status, env.ErrorType, env.Error)
}

// bounded is the API client's transport: client_golang's api.Client reads a
// body whole and without a limit, so an answer that never ends (a broken
// proxy, a query matching far too much) would fill the memory. Its bodies
// end with scrape.ErrBodyTooLarge past scrape.MaxBody, as a direct scrape's
// do. It also notes the status of the last answer for callError.
type bounded struct {
	base   http.RoundTripper
	status int
}

func (b *bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b.status = resp.StatusCode
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: scrape.MaxBody}
	return resp, nil
}

// boundedBody passes up to left bytes through, then ErrBodyTooLarge if
// another byte follows (EOF if none: a body of exactly MaxBody is whole).
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, scrape.ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// typeOf is an answer's result type, "" for none (`"data": null`).
func typeOf(v model.Value) string {
	if v == nil {
		return ""
	}
	return v.Type().String()
}

// timeOf is a sample's time as llmbench keeps it: milliseconds, in UTC.
func timeOf(t model.Time) time.Time { return time.UnixMilli(int64(t)).UTC() }

// series is one sample of one series: its name, other labels and value.
type series struct {
	name   string
	labels map[string]string // without __name__
	value  float64
}

func seriesOf(metric model.Metric, v float64) series {
	labels := make(map[string]string, len(metric))
	for k, val := range metric {
		if k != model.MetricNameLabel {
			labels[string(k)] = string(val)
		}
	}
	return series{name: string(metric[model.MetricNameLabel]), labels: labels, value: v}
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
