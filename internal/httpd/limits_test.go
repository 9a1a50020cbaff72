package httpd

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsProblems(t *testing.T) {
	tests := []struct {
		name string
		l    Limits
		want string
	}{
		{"zero", Limits{}, ""},
		{"negatives", Limits{MaxBody: -1, MaxHeaderBytes: -2, IdleTimeout: -time.Second},
			"MaxBody: -1 is negative; MaxHeaderBytes: -2 is negative; IdleTimeout: -1s is negative"},
		{"grace over the default timeout", Limits{DrainGrace: time.Minute}, "DrainGrace: 1m0s exceeds DrainTimeout 25s"},
		{"grace within its timeout", Limits{DrainGrace: time.Minute, DrainTimeout: 2 * time.Minute}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.l.Problems(), "; "); got != tt.want {
			t.Errorf("%s: Problems() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	got := Limits{ReadTimeout: time.Second, DrainGrace: 3 * time.Second}.WithDefaults(1 << 20)
	want := Limits{MaxBody: 1 << 20, MaxHeaderBytes: 64 << 10, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: time.Second, WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute,
		DrainGrace: 3 * time.Second, DrainTimeout: 25 * time.Second}
	if got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
}
