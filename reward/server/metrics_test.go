package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRequestCounts: a code is exported once it has been sent, whether
// it is one of sentCodes (kept after the first look-up) or not.
func TestRequestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "h"}, []string{"route", "code"})
	reg.MustRegister(vec)
	r := requestCounts{vec: vec.MustCurryWith(prometheus.Labels{"route": "x"})}
	for _, code := range []int{200, 200, 413, 431, 200} {
		r.inc(code)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range mfs[0].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "code" {
				got[lp.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{"200": 3, "413": 1, "431": 1}
	if len(got) != len(want) {
		t.Errorf("series by code = %v, want %v", got, want)
	}
	for code, n := range want {
		if got[code] != n {
			t.Errorf("code %s: %v requests, want %v", code, got[code], n)
		}
	}
}
