package scrape

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	ttft := Histogram{Bounds: []float64{0.1, 0.2, 0.4}, Cumulative: []float64{200, 300, 320}, Count: 320, Sum: 30.5}
	tail := Histogram{Bounds: []float64{1, 2}, Cumulative: []float64{1, 2}, Count: 10}
	tests := []struct {
		name string
		h    Histogram
		q    float64
		want Estimate
	}{
		{"p50 in the first bucket starts at 0", ttft, 0.5, Estimate{Value: 0.08, Lower: 0, Upper: 0.1, Count: 320}},
		{"p90", ttft, 0.9, Estimate{Value: 0.188, Lower: 0.1, Upper: 0.2, Count: 320}},
		{"p99", ttft, 0.99, Estimate{Value: 0.368, Lower: 0.2, Upper: 0.4, Count: 320}},
		{"q=0 is the first bucket's lower bound", ttft, 0, Estimate{Value: 0, Lower: 0, Upper: 0.1, Count: 320}},
		{"q=1 is the last non-empty bucket's upper bound", ttft, 1, Estimate{Value: 0.4, Lower: 0.2, Upper: 0.4, Count: 320}},
		{"in +Inf: above the top bound", tail, 0.5, Estimate{Value: 2, Lower: 2, Upper: inf, Count: 10, AboveTop: true}},
		{"below +Inf still estimated", tail, 0.15, Estimate{Value: 1.5, Lower: 1, Upper: 2, Count: 10}},
		{"empty", Histogram{Bounds: []float64{1}, Cumulative: []float64{0}}, 0.5, Estimate{Value: nan, Lower: nan, Upper: nan}},
		{"zero value", Histogram{}, 0.5, Estimate{Value: nan, Lower: nan, Upper: nan}},
		{"only +Inf", Histogram{Count: 5, Sum: 10}, 0.5, Estimate{Value: nan, Lower: nan, Upper: inf, Count: 5, AboveTop: true}},
		{"q < 0", ttft, -0.1, Estimate{Value: nan, Lower: nan, Upper: nan, Count: 320}},
		{"q > 1", ttft, 1.1, Estimate{Value: nan, Lower: nan, Upper: nan, Count: 320}},
		{"q NaN", ttft, nan, Estimate{Value: nan, Lower: nan, Upper: nan, Count: 320}},
		{
			"leading empty buckets skipped at q=0",
			Histogram{Bounds: []float64{1, 2, 3}, Cumulative: []float64{0, 0, 4}, Count: 4}, 0,
			Estimate{Value: 2, Lower: 2, Upper: 3, Count: 4},
		},
		{
			"interpolated after empty buckets",
			Histogram{Bounds: []float64{1, 2, 3}, Cumulative: []float64{0, 0, 4}, Count: 4}, 0.5,
			Estimate{Value: 2.5, Lower: 2, Upper: 3, Count: 4},
		},
		{
			"non-positive first bound is returned as is",
			Histogram{Bounds: []float64{-1, 1}, Cumulative: []float64{2, 4}, Count: 4}, 0.25,
			Estimate{Value: -1, Lower: -1, Upper: -1, Count: 4},
		},
		{
			"zero first bound (SGLang queue time)",
			Histogram{Bounds: []float64{0, 0.1}, Cumulative: []float64{250, 320}, Count: 320}, 0.5,
			Estimate{Value: 0, Lower: 0, Upper: 0, Count: 320},
		},
		{
			"torn cumulative counts read as their running maximum",
			Histogram{Bounds: []float64{1, 2, 3}, Cumulative: []float64{5, 3, 10}, Count: 10}, 0.5,
			Estimate{Value: 1, Lower: 0, Upper: 1, Count: 10},
		},
		{
			"count missing: the last bucket is the total",
			Histogram{Bounds: []float64{1, 2}, Cumulative: []float64{2, 4}}, 0.75,
			Estimate{Value: 1.5, Lower: 1, Upper: 2, Count: 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.h.Quantile(tt.q)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Quantile(%v) (-want +got):\n%s", tt.q, diff)
			}
			if got.OK() == math.IsNaN(tt.want.Value) {
				t.Errorf("OK() = %v for value %v", got.OK(), got.Value)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("estimate does not encode: %v", err)
			}
		})
	}
}

func TestEstimateJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Estimate
		want string
	}{
		{Estimate{Value: 0.08, Lower: 0, Upper: 0.1, Count: 320}, `{"value":0.08,"lower":0,"upper":0.1,"count":320}`},
		{Estimate{Value: 2, Lower: 2, Upper: math.Inf(1), Count: 10, AboveTop: true}, `{"value":2,"lower":2,"upper":null,"count":10,"above_top":true}`},
		{Histogram{}.Quantile(0.5), `{"value":null,"lower":null,"upper":null,"count":0}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("got %s, want %s", b, tt.want)
		}
	}
}

func TestMean(t *testing.T) {
	t.Parallel()
	tests := []struct {
		h      Histogram
		want   float64
		wantOK bool
	}{
		{Histogram{Count: 4, Sum: 1}, 0.25, true},
		{Histogram{Count: 0, Sum: 0}, 0, false},
		{Histogram{Count: 40640, Sum: 955.04}, 0.0235, true},
	}
	for _, tt := range tests {
		got, ok := tt.h.Mean()
		if ok != tt.wantOK || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%+v.Mean() = %v, %v; want %v, %v", tt.h, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestBinAndCDF(t *testing.T) {
	t.Parallel()
	bounds := []float64{0.1, 0.2, 0.4}
	tests := []struct {
		name    string
		samples []float64
		want    Histogram
		wantCDF []float64
	}{
		{
			name:    "le is inclusive, above the top goes to +Inf only",
			samples: []float64{0.05, 0.1, 0.15, 0.2, 0.3, 0.5, math.NaN()},
			want:    Histogram{Bounds: bounds, Cumulative: []float64{2, 4, 5}, Count: 6, Sum: 1.3},
			wantCDF: []float64{2.0 / 6, 4.0 / 6, 5.0 / 6},
		},
		{
			name:    "no samples",
			want:    Histogram{Bounds: bounds, Cumulative: []float64{0, 0, 0}},
			wantCDF: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Bin(bounds, tt.samples)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Bin (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCDF, got.CDF(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("CDF (-want +got):\n%s", diff)
			}
		})
	}
	// A client sample set binned into the server's buckets gives the same
	// quantile estimate as the server's histogram of the same values.
	server := Histogram{Bounds: bounds, Cumulative: []float64{2, 4, 5}, Count: 6, Sum: 1.3}
	client := Bin(server.Bounds, []float64{0.05, 0.1, 0.15, 0.2, 0.3, 0.5})
	if s, c := server.Quantile(0.5), client.Quantile(0.5); s != c {
		t.Errorf("server p50 %+v != client p50 %+v", s, c)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	a := Histogram{Bounds: []float64{0.1, 0.2, 0.4}, Cumulative: []float64{1, 2, 3}, Count: 4, Sum: 1}
	tests := []struct {
		name string
		b    Histogram
		want Histogram
	}{
		{
			name: "same buckets add",
			b:    Histogram{Bounds: []float64{0.1, 0.2, 0.4}, Cumulative: []float64{10, 20, 30}, Count: 40, Sum: 10},
			want: Histogram{Bounds: []float64{0.1, 0.2, 0.4}, Cumulative: []float64{11, 22, 33}, Count: 44, Sum: 11},
		},
		{
			name: "different buckets keep the shared bounds",
			b:    Histogram{Bounds: []float64{0.2, 0.3, 0.4, 0.8}, Cumulative: []float64{20, 25, 30, 35}, Count: 40, Sum: 10},
			want: Histogram{Bounds: []float64{0.2, 0.4}, Cumulative: []float64{22, 33}, Count: 44, Sum: 11},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, a.merge(tt.b)); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareCDF(t *testing.T) {
	t.Parallel()
	server := Histogram{Bounds: []float64{0.1, 0.2, 0.4}, Cumulative: []float64{50, 90, 100}, Count: 100}
	tests := []struct {
		name    string
		client  []float64
		want    []CDFPoint
		wantGap float64
	}{
		{
			name:   "client slower by a bucket",
			client: []float64{0.15, 0.15, 0.3, 0.5},
			want: []CDFPoint{
				{Bound: 0.1, Server: 0.5, Client: 0}, {Bound: 0.2, Server: 0.9, Client: 0.5}, {Bound: 0.4, Server: 1, Client: 0.75},
			},
			wantGap: 0.5,
		},
		{name: "no client samples", client: nil, want: nil, wantGap: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, gap := CompareCDF(server, tt.client)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("CompareCDF (-want +got):\n%s", diff)
			}
			if math.Abs(gap-tt.wantGap) > 1e-12 {
				t.Errorf("gap = %v, want %v", gap, tt.wantGap)
			}
		})
	}
	if _, gap := CompareCDF(Histogram{Bounds: []float64{1}, Cumulative: []float64{0}}, []float64{1}); gap != 0 {
		t.Errorf("empty server: gap %v", gap)
	}
}

func TestEstimateContains(t *testing.T) {
	t.Parallel()
	e := Histogram{Bounds: []float64{0.1, 0.2}, Cumulative: []float64{5, 10}, Count: 10}.Quantile(0.9)
	for v, want := range map[float64]bool{0.1: true, 0.15: true, 0.2: true, 0.09: false, 0.21: false} {
		if got := e.Contains(v); got != want {
			t.Errorf("%+v.Contains(%v) = %v", e, v, got)
		}
	}
	if (Histogram{}).Quantile(0.5).Contains(0) {
		t.Error("an empty estimate contains 0")
	}
	if top := (Histogram{Bounds: []float64{1}, Cumulative: []float64{0}, Count: 3}).Quantile(0.5); !top.Contains(50) || top.Contains(0.5) {
		t.Errorf("above-top estimate %+v: contains 50 %v, 0.5 %v", top, top.Contains(50), top.Contains(0.5))
	}
}
