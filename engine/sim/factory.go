package sim

import "github.com/prometheus/client_golang/prometheus"

// factory registers metrics on one registry with constant labels.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string, labels prometheus.Labels) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
	f.reg.MustRegister(c)
	return c
}

func (f factory) counterVec(name, help string, labels prometheus.Labels, varLabels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, varLabels)
	f.reg.MustRegister(c)
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
	return h
}
