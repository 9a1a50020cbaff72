package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/httpd"
)

// rawConn is one keep-alive HTTP/1.1 connection on which the tests see
// exactly what happened to each request they wrote.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: c, br: bufio.NewReader(c)}, nil
}

// do writes req and reads one response; an error means the request was
// (at least partly) written and no whole response came back.
func (rc *rawConn) do(req []byte) (*http.Response, string, error) {
	rc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.Write(req); err != nil {
		return nil, "", fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return nil, "", fmt.Errorf("read: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, "", fmt.Errorf("read body: %w", err)
	}
	return resp, string(b), nil
}

func rawRequest(method, path, body string) []byte {
	return []byte(fmt.Sprintf("%s %s HTTP/1.1\r\nHost: reward\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, len(body), body))
}

const (
	slimeBody   = `{"response":"<answer>[140, 160]</answer>","label":"150"}`
	slimeReward = "1.56"
)

// TestDrainReadiness follows one drain: /healthz turns 503 at once, a
// keep-alive connection opened before the signal is still answered (with
// Connection: close) during the grace, a new connection too, and after
// the grace the listener is closed.
func TestDrainReadiness(t *testing.T) {
	const grace = 500 * time.Millisecond
	s := start(t, Config{Limits: httpd.Limits{DrainGrace: grace}})
	addr := strings.TrimPrefix(s.url, "http://")
	kept, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	resp, body, err := kept.do(rawRequest("POST", "/slime", slimeBody))
	if err != nil || resp.StatusCode != 200 || body != slimeReward || resp.Close {
		t.Fatalf("before the drain: %v %v %q, want 200 %s on a kept-alive connection", err, resp, body, slimeReward)
	}
	began := time.Now()
	s.cancel()

	checks := []struct {
		name, method, path, body string
		code                     int
		want                     string
		conn                     func() (*rawConn, error)
	}{
		{"healthz on a new connection", "GET", "/healthz", "", 503, `{"error":"draining"}`, func() (*rawConn, error) { return dialRaw(addr) }},
		{"keep-alive connection from before", "POST", "/slime", slimeBody, 200, slimeReward, func() (*rawConn, error) { return kept, nil }},
		{"new connection during the grace", "POST", "/slime", slimeBody, 200, slimeReward, func() (*rawConn, error) { return dialRaw(addr) }},
	}
	// The first check may race the drain's start: poll /healthz until it
	// turns, within a fraction of the grace.
	for {
		rc, err := dialRaw(addr)
		if err != nil {
			t.Fatal(err)
		}
		resp, _, err := rc.do(rawRequest("GET", "/healthz", ""))
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 503 {
			break
		}
		if time.Since(began) > grace/2 {
			t.Fatalf("/healthz still %d %v after the drain began", resp.StatusCode, time.Since(began))
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, c := range checks {
		rc, err := c.conn()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp, body, err := rc.do(rawRequest(c.method, c.path, c.body))
		if err != nil || resp.StatusCode != c.code || body != c.want || !resp.Close {
			t.Fatalf("%s: %v %v %q, want %d %s with Connection: close", c.name, err, resp, body, c.code, c.want)
		}
		// The server closes the connection after that response.
		if n, err := rc.br.ReadByte(); err != io.EOF {
			t.Fatalf("%s: after a Connection: close response read %v %v, want EOF", c.name, n, err)
		}
		rc.Close()
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if took := time.Since(began); took < grace {
		t.Errorf("Serve returned %v after cancel, before the %v grace ended", took, grace)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dial after the drain: connected, want refused")
	}
}

// TestDrainTimeout holds a request half-sent through the drain: Serve
// gives up at DrainTimeout, closes it and says so, while an idle
// keep-alive connection is closed without holding the drain up.
func TestDrainTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	s := start(t, Config{Limits: httpd.Limits{DrainTimeout: timeout}})
	addr := strings.TrimPrefix(s.url, "http://")
	idle, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if resp, _, err := idle.do(rawRequest("GET", "/healthz", "")); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /healthz = %v %v", resp, err)
	}
	stuck, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := stuck.Write([]byte("POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"resp")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	err = s.stop(t)
	took := time.Since(began)
	want := fmt.Sprintf("drain %s: drain timeout: closed 1 connections still busy after %v", addr, timeout)
	if err == nil || err.Error() != want || !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("Serve = %v, want %s", err, want)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("Serve returned %v after cancel, want about %v", took, timeout)
	}
	for name, rc := range map[string]*rawConn{"idle": idle, "stuck": stuck} {
		rc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := io.ReadAll(rc.br); len(b) != 0 || err != nil {
			t.Errorf("%s connection after the drain: read %q %v, want a clean close with nothing sent", name, b, err)
		}
	}
}
