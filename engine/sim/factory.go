package sim

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// factory registers metrics on one registry with constant labels. When
// created is set, every counter and histogram also gets the `<name>_created`
// gauge that a default (single-process) prometheus_client registry emits in
// the classic text format (a separate gauge family, same labels, the
// creation time in Unix seconds).
type factory struct {
	reg     *prometheus.Registry
	created time.Time
}

// createdGauge registers the _created companion of a counter or histogram:
// prometheus_client strips a counter's _total suffix first, not a histogram's.
func (f factory) createdGauge(name, help string, counter bool, labels prometheus.Labels, varLabels ...string) *prometheus.GaugeVec {
	if f.created.IsZero() {
		return nil
	}
	base := name
	if counter {
		base = strings.TrimSuffix(name, "_total")
	}
	base += "_created"
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: base, Help: help, ConstLabels: labels}, varLabels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) createdAt() float64 { return float64(f.created.UnixNano()) / 1e9 }

func (f factory) counter(name, help string, labels prometheus.Labels) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
	f.reg.MustRegister(c)
	if g := f.createdGauge(name, help, true, labels); g != nil {
		g.WithLabelValues().Set(f.createdAt())
	}
	return c
}

// counterVec is a counter with one variable label. Children named in values
// exist from the start (at 0); others appear on first use. With created set,
// only the pre-created children get a _created series, so pass them all.
func (f factory) counterVec(name, help string, labels prometheus.Labels, varLabel string, values ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, []string{varLabel})
	f.reg.MustRegister(c)
	g := f.createdGauge(name, help, true, labels, varLabel)
	for _, v := range values {
		c.WithLabelValues(v)
		if g != nil {
			g.WithLabelValues(v).Set(f.createdAt())
		}
	}
	return c
}

func (f factory) gauge(name, help string, labels prometheus.Labels) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
	f.reg.MustRegister(g)
	return g
}

func (f factory) gaugeVec(name, help string, labels prometheus.Labels, varLabels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, varLabels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, labels prometheus.Labels, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: labels, Buckets: buckets})
	f.reg.MustRegister(h)
	if g := f.createdGauge(name, help, false, labels); g != nil {
		g.WithLabelValues().Set(f.createdAt())
	}
	return h
}
