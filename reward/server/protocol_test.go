package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"bagen-data/internal/httpd"
)

// roundTrip writes raw on a fresh connection and returns the response
// (status line, headers, body) exactly as it arrived.
func roundTrip(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Write([]byte(raw)) // a 2 MB header is still being written when the answer comes
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%.60q: reading the response: %v (got %q)", raw, err, b)
	}
	return string(b)
}

// TestProtocolErrors sends requests net/http rejects before any handler
// runs and checks that each gets its status with the JSON envelope, and
// is counted under route="protocol".
func TestProtocolErrors(t *testing.T) {
	s := start(t, Config{Limits: httpd.Limits{MaxHeaderBytes: 4096}})
	addr := strings.TrimPrefix(s.url, "http://")
	tests := []struct {
		name, raw string
		status    string
		body      string
	}{
		{"garbage request line", "GARBAGE\r\n\r\n",
			"400 Bad Request", `{"error":"bad request: malformed request line or header"}`},
		{"negative Content-Length", "POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
			"400 Bad Request", `{"error":"bad request: malformed request line or header"}`},
		{"two Content-Lengths", "POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
			"400 Bad Request", `{"error":"bad request: malformed request line or header"}`},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n",
			"400 Bad Request", `{"error":"bad request: missing required Host header"}`},
		{"invalid header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",
			"400 Bad Request", `{"error":"bad request: invalid header name"}`},
		{"2 MB header", "POST /slime HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n",
			"431 Request Header Fields Too Large", `{"error":"request header too large: limit 4096 bytes"}`},
		{"unknown transfer coding", "POST /slime HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
			"501 Not Implemented", `{"error":"not implemented: unsupported transfer encoding"}`},
		{"HTTP/3.0 over TCP", "GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n",
			"505 HTTP Version Not Supported", `{"error":"HTTP version not supported: unsupported protocol version"}`},
		{"unknown expectation", "POST /slime HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}",
			"417 Expectation Failed", `{"error":"expectation failed: only \"Expect: 100-continue\" is supported"}`},
		{"unknown expectation, HTTP/1.0", "GET /healthz HTTP/1.0\r\nExpect: teapot\r\n\r\n",
			"417 Expectation Failed", `{"error":"expectation failed: only \"Expect: 100-continue\" is supported"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := "HTTP/1.1 " + tt.status + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
				itoa(len(tt.body)) + "\r\n\r\n" + tt.body
			if got := roundTrip(t, addr, tt.raw); got != want {
				t.Fatalf("%.60q:\ngot  %q\nwant %q", tt.raw, got, want)
			}
		})
	}
	if got, want := counter(t, s.reg, "bagen_reward_requests_total", map[string]string{"route": "protocol", "code": "400"}), 5.0; got != want {
		t.Errorf(`requests_total{route="protocol",code="400"} = %v, want %v`, got, want)
	}
}

// TestHandlerSeesTheRest pins the malformed requests that net/http lets
// through to the handler, which answers them itself.
func TestHandlerSeesTheRest(t *testing.T) {
	s := start(t, Config{Limits: httpd.Limits{MaxBody: 1024}})
	addr := strings.TrimPrefix(s.url, "http://")
	tests := []struct {
		name, raw string
		code      int
		body      string
	}{
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, `{"error":"not found: no route *; endpoints: ` + wantEndpoints("x") + `"}`},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 404, `{"error":"not found: no route *; endpoints: ` + wantEndpoints("HOST:PORT") + `"}`},
		{"bad chunk size", "POST /slime HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, `{"error":"bad request: reading body: invalid byte in chunk length"}`},
		{"declared length over the limit", "POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n", 413, `{"error":"request body too large: 67108864 bytes, limit 1024"}`},
		{"chunk over the limit", "POST /slime HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4000000\r\n" + strings.Repeat("x", 2048), 413, `{"error":"request body too large: limit 1024 bytes"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte(tt.raw)); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || string(b) != tt.body || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%.60q = %d %s %q, want %d %s application/json", tt.raw, resp.StatusCode, b, resp.Header.Get("Content-Type"), tt.code, tt.body)
			}
		})
	}
}

// FuzzRawRequest writes arbitrary bytes to a real server: every response
// that comes back, if any, is a well-formed HTTP response, and every
// error is the JSON envelope.
func FuzzRawRequest(f *testing.F) {
	for _, s := range []string{
		"GARBAGE\r\n\r\n",
		"POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
		"POST /slime HTTP/1.1\r\nHost: x\r\nContent-Length: 56\r\n\r\n" + slimeBody,
		"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /v1/rewards HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
	} {
		f.Add([]byte(s))
	}
	s := start(f, Config{Limits: httpd.Limits{MaxBody: 1 << 16, MaxHeaderBytes: 1 << 12, ReadHeaderTimeout: time.Second, ReadTimeout: time.Second}})
	addr := strings.TrimPrefix(s.url, "http://")
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			c.Write(raw)
			c.(*net.TCPConn).CloseWrite()
		}()
		out, err := io.ReadAll(c)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("%q: reading: %v", raw, err)
		}
		if len(out) == 0 {
			return // closed without an answer: nothing was a whole request
		}
		br := bufio.NewReader(strings.NewReader(string(out)))
		for {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%q: answer %q does not parse: %v", raw, out, err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				if bytes.Contains(raw, []byte("HEAD")) {
					return // a HEAD response has a Content-Length and no body
				}
				t.Fatalf("%q: answer %q: body: %v", raw, out, err)
			}
			var e struct{ Error string }
			if resp.StatusCode >= 400 && (json.Unmarshal(b, &e) != nil || e.Error == "" || resp.Header.Get("Content-Type") != "application/json") {
				t.Fatalf("%q: %d %q %q, want the JSON error envelope", raw, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if _, err := br.Peek(1); err != nil {
				return
			}
		}
	})
}
