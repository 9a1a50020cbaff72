package httpd

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// Limits are the request limits and timeouts of a server run by Server:
// what reward serve, grpo serve and the guard take in their configs. A
// zero field means its default: WithDefaults' shared ones, or a server's
// own through Or.
type Limits struct {
	MaxBody           int64
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	DrainGrace        time.Duration
	DrainTimeout      time.Duration
}

// Problems lists every bad field by name: a negative size or duration, and
// a drain grace longer than the drain timeout (its default when zero).
func (l Limits) Problems() []string {
	var bad []string
	if l.MaxBody < 0 {
		bad = append(bad, fmt.Sprintf("MaxBody: %d is negative", l.MaxBody))
	}
	if l.MaxHeaderBytes < 0 {
		bad = append(bad, fmt.Sprintf("MaxHeaderBytes: %d is negative", l.MaxHeaderBytes))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadHeaderTimeout", l.ReadHeaderTimeout}, {"ReadTimeout", l.ReadTimeout},
		{"WriteTimeout", l.WriteTimeout}, {"IdleTimeout", l.IdleTimeout},
		{"DrainGrace", l.DrainGrace}, {"DrainTimeout", l.DrainTimeout},
	} {
		if d.v < 0 {
			bad = append(bad, fmt.Sprintf("%s: %v is negative", d.name, d.v))
		}
	}
	if timeout := or(l.DrainTimeout, DefaultDrainTimeout); l.DrainGrace > timeout {
		bad = append(bad, fmt.Sprintf("DrainGrace: %v exceeds DrainTimeout %v", l.DrainGrace, timeout))
	}
	return bad
}

// WithDefaults returns l with its zero fields set to the defaults, maxBody
// for MaxBody. DrainGrace's zero means no grace and stays.
func (l Limits) WithDefaults(maxBody int64) Limits {
	l.MaxBody = or(l.MaxBody, maxBody)
	l.MaxHeaderBytes = or(l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	l.ReadHeaderTimeout = or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	l.ReadTimeout = or(l.ReadTimeout, DefaultTimeout)
	l.WriteTimeout = or(l.WriteTimeout, DefaultTimeout)
	l.IdleTimeout = or(l.IdleTimeout, DefaultTimeout)
	l.DrainTimeout = or(l.DrainTimeout, DefaultDrainTimeout)
	return l
}

// Or returns l with each zero field set to def's, for a server whose
// defaults are not WithDefaults' (the guard's: no read or write timeout,
// since it relays streams of any length).
func (l Limits) Or(def Limits) Limits {
	l.MaxBody = or(l.MaxBody, def.MaxBody)
	l.MaxHeaderBytes = or(l.MaxHeaderBytes, def.MaxHeaderBytes)
	l.ReadHeaderTimeout = or(l.ReadHeaderTimeout, def.ReadHeaderTimeout)
	l.ReadTimeout = or(l.ReadTimeout, def.ReadTimeout)
	l.WriteTimeout = or(l.WriteTimeout, def.WriteTimeout)
	l.IdleTimeout = or(l.IdleTimeout, def.IdleTimeout)
	l.DrainGrace = or(l.DrainGrace, def.DrainGrace)
	l.DrainTimeout = or(l.DrainTimeout, def.DrainTimeout)
	return l
}

// Server returns a Server of h with l's limits; draining (nil: the
// server's own) is set when the drain begins.
func (l Limits) Server(h http.Handler, draining *atomic.Bool) *Server {
	return &Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes,
		DrainGrace: l.DrainGrace, DrainTimeout: l.DrainTimeout, Draining: draining}
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
