package httpd

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRequestCounts: a code is exported once it has been sent, whether
// it is one of sentCodes (kept after the first look-up) or not.
func TestRequestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewRequestMetrics("x")
	if err := Register(reg, m.Collectors()...); err != nil {
		t.Fatal(err)
	}
	r := m.Bind("r")
	for _, code := range []int{200, 200, 413, 431, 200} {
		r.Observe(code, 0)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	if len(mfs) != 2 || mfs[1].GetName() != "x_requests_total" {
		t.Fatalf("gathered %v, want x_request_duration_seconds and x_requests_total", mfs)
	}
	for _, m := range mfs[1].GetMetric() {
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

// TestRegisterTwice: a name registered twice is a config error.
func TestRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := Register(reg, NewRequestMetrics("x").Collectors()...); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg, NewRequestMetrics("x").Collectors()...); !errors.Is(err, ErrConfig) {
		t.Errorf("second registration: %v, want an error wrapping ErrConfig", err)
	}
}

func TestCheckMethod(t *testing.T) {
	tests := []struct {
		method, want string
		ok           bool
	}{
		{"GET", "GET", true}, {"HEAD", "GET", true}, {"POST", "POST", true},
		{"HEAD", "POST", false}, {"GET", "POST", false}, {"POST", "GET", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "/x", nil)
		err := CheckMethod(r, tt.want)
		if (err == nil) != tt.ok || (err != nil && (!errors.Is(err, ErrMethod) || err.Error() != "method not allowed: "+tt.method+" /x, want "+tt.want)) {
			t.Errorf("%s on a %s route: %v", tt.method, tt.want, err)
		}
	}
}

func TestConfigError(t *testing.T) {
	if err := ConfigError(nil); err != nil {
		t.Errorf("no problems: %v", err)
	}
	err := ConfigError([]string{"A: bad", "B: worse"})
	if !errors.Is(err, ErrConfig) || err.Error() != "invalid server config: A: bad; B: worse" {
		t.Errorf("got %v", err)
	}
}

// TestRoutes: paths find their endpoints, others find Other, and a name
// or path taken (a pseudo-route's name included) or empty is refused.
func TestRoutes(t *testing.T) {
	type ep struct{ name string }
	rt := NewRoutes(func(name string) *ep { return &ep{name} })
	if rt.Other.name != "other" || rt.Protocol.name != "protocol" {
		t.Fatalf("pseudo-routes %q %q", rt.Other.name, rt.Protocol.name)
	}
	a := &ep{"a"}
	if !rt.Add("a", "/a", a) {
		t.Fatal("first route refused")
	}
	for _, tt := range []struct{ name, path string }{{"a", "/b"}, {"b", "/a"}, {"other", "/c"}, {"protocol", "/c"}, {"", "/c"}, {"c", ""}} {
		if rt.Add(tt.name, tt.path, &ep{tt.name}) {
			t.Errorf("Add(%q, %q) accepted", tt.name, tt.path)
		}
	}
	if rt.Find("/a") != a || rt.Find("/b") != rt.Other || rt.Find("/c") != rt.Other {
		t.Errorf("Find: /a %v, /b %v, /c %v", rt.Find("/a"), rt.Find("/b"), rt.Find("/c"))
	}
}

// TestLogRequest pins the access-log record: method, path, status, the
// server's extra attributes, duration and remote, in that order; a nil
// logger logs nothing.
func TestLogRequest(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	LogRequest(context.Background(), log, "POST", "/v1/rewards", "127.0.0.1:5", 200, 1500*time.Microsecond, slog.Int("items", 3))
	LogRequest(context.Background(), nil, "GET", "/x", "", 404, 0)
	want := "level=INFO msg=request method=POST path=/v1/rewards status=200 items=3 duration=1.5ms remote=127.0.0.1:5\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
