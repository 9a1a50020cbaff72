package guard

import (
	"bytes"
	"io"
)

// Event is one server-sent event: its raw bytes as received (blank line
// included), its event name and its data.
type Event struct {
	Raw  []byte
	Name string
	Data []byte
}

// parseEvent reads the event: and data: fields of one event's lines.
func parseEvent(raw []byte) Event {
	e := Event{Raw: raw}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			e.Name = string(value)
		case "data":
			if e.Data != nil {
				e.Data = append(append(e.Data, '\n'), value...)
			} else {
				e.Data = append([]byte{}, value...)
			}
		}
	}
	return e
}

// eventEnd is the end of the first complete event in b (after its blank
// line), or -1.
func eventEnd(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		switch {
		case b[i+1] == '\n':
			return i + 2
		case b[i+1] == '\r' && i+2 < len(b) && b[i+2] == '\n':
			return i + 3
		}
	}
	return -1
}

// sseReader relays a stream event by event: each complete event is shown
// to the observer, which may drop it; bytes after the last complete event
// wait for the rest of it. Reads return as soon as one event is ready, so
// the proxy flushes each event as it arrives.
type sseReader struct {
	src     io.Reader
	obs     Stream
	pending []byte // received, not yet a complete event
	out     []byte // ready to relay
	buf     []byte
	err     error
	// onDone runs once, when the final event is seen, before it is
	// relayed; onClose when the body is closed.
	onDone  func(r *sseReader)
	onClose func(r *sseReader)
	closed  bool
	closer  io.Closer
}

func (s *sseReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.pending) > 0 { // a last event without its blank line
				e := parseEvent(s.pending)
				s.pending = nil
				if s.obs.Event(e) {
					s.out = e.Raw
				}
				continue
			}
			return 0, s.err
		}
		if s.buf == nil {
			s.buf = make([]byte, 32<<10)
		}
		n, err := s.src.Read(s.buf)
		s.pending = append(s.pending, s.buf[:n]...)
		s.err = err
		for {
			end := eventEnd(s.pending)
			if end < 0 {
				break
			}
			e := parseEvent(s.pending[:end:end])
			s.pending = append([]byte{}, s.pending[end:]...)
			relay := s.obs.Event(e)
			if s.obs.Done() && s.onDone != nil {
				// Record the call before the agent sees its end.
				s.onDone(s)
				s.onDone = nil
			}
			if relay {
				s.out = append(s.out, e.Raw...)
			}
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseReader) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.closer.Close()
	if s.onClose != nil {
		s.onClose(s)
	}
	return err
}
