package httpd

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// Limits are the request limits and timeouts of a server run by Server,
// embedded in the configs of reward serve, grpo serve and the guard. A
// zero field means its default: WithDefaults' shared ones, or a server's
// own through Or. The commands' flags default to the same constants,
// except --drain-grace (DefaultDrainGrace), since a zero grace means none.
type Limits struct {
	// MaxBody is the largest request body in bytes; 0 means the server's
	// own default (its DefaultMaxBody).
	MaxBody int64
	// MaxHeaderBytes bounds the request line and header block; 0 means
	// 64 KiB. net/http reads up to 4 KiB more before answering 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading request headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request; 0 means 2m.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling and writing a response; 0 means 2m.
	WriteTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection; 0 means 2m.
	IdleTimeout time.Duration
	// DrainGrace is how long Serve keeps accepting and serving after its
	// context is cancelled, with /healthz answering 503 and every
	// response carrying Connection: close, so that a load balancer sees
	// the server unready and stops sending before the listener closes.
	// 0 means none: the listener closes at once (DefaultDrainGrace is the
	// commands' default).
	DrainGrace time.Duration
	// DrainTimeout bounds the whole drain, grace included, from the
	// context's cancellation to Serve's return; 0 means 25s, under
	// Kubernetes' default 30s termination grace period.
	DrainTimeout time.Duration
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
	if timeout := cmp.Or(l.DrainTimeout, DefaultDrainTimeout); l.DrainGrace > timeout {
		bad = append(bad, fmt.Sprintf("DrainGrace: %v exceeds DrainTimeout %v", l.DrainGrace, timeout))
	}
	return bad
}

// ConfigError is nil when bad is empty, else an error wrapping ErrConfig
// that lists every bad field.
func ConfigError(bad []string) error {
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
}

// WithDefaults returns l with its zero fields set to the defaults, maxBody
// for MaxBody. DrainGrace's zero means no grace and stays.
func (l Limits) WithDefaults(maxBody int64) Limits {
	l.MaxBody = cmp.Or(l.MaxBody, maxBody)
	l.MaxHeaderBytes = cmp.Or(l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	l.ReadHeaderTimeout = cmp.Or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	l.ReadTimeout = cmp.Or(l.ReadTimeout, DefaultTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, DefaultTimeout)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, DefaultTimeout)
	l.DrainTimeout = cmp.Or(l.DrainTimeout, DefaultDrainTimeout)
	return l
}

// Or returns l with each zero field set to def's, for a server whose
// defaults are not WithDefaults' (the guard's: no read or write timeout,
// since it relays streams of any length).
func (l Limits) Or(def Limits) Limits {
	l.MaxBody = cmp.Or(l.MaxBody, def.MaxBody)
	l.MaxHeaderBytes = cmp.Or(l.MaxHeaderBytes, def.MaxHeaderBytes)
	l.ReadHeaderTimeout = cmp.Or(l.ReadHeaderTimeout, def.ReadHeaderTimeout)
	l.ReadTimeout = cmp.Or(l.ReadTimeout, def.ReadTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, def.WriteTimeout)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, def.IdleTimeout)
	l.DrainGrace = cmp.Or(l.DrainGrace, def.DrainGrace)
	l.DrainTimeout = cmp.Or(l.DrainTimeout, def.DrainTimeout)
	return l
}
