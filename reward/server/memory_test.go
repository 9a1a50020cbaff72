package server

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/httpd"
)

// Memory bounds pinned by TestHostileClientsMemory (documented in the
// README): what a connection that has sent only a few hundred bytes may
// cost the heap (measured: 9.5 KiB while headers arrive, 16.5 KiB while
// the handler waits for the body), and the factor on bytes sent (the body
// buffer doubles when full: 161 KiB for 64 KiB received).
const (
	perConnHeapBound = 32 << 10
	sentFactor       = 2.5
)

// TestHostileClientsMemory connects 64 clients that hold their
// connections open — slow headers, bodies declared huge but barely sent,
// a huge chunk size, a slow body — and checks that the server's heap grows
// with what they sent, not with what they declared.
func TestHostileClientsMemory(t *testing.T) {
	const (
		clients  = 64
		maxBody  = 16 << 20
		slowBody = 64 << 10 // bytes each slow-body client sends
	)
	s := start(t, Config{Limits: httpd.Limits{MaxBody: maxBody, ReadHeaderTimeout: time.Minute, ReadTimeout: time.Minute}})
	addr := strings.TrimPrefix(s.url, "http://")
	if code, body := post(t, s.url+"/slime", `{"response":"<answer>[140, 160]</answer>","label":"150"}`); code != 200 || body != "1.56" {
		t.Fatalf("warm-up POST /slime = %d %s", code, body)
	}
	head := func(extra string) string {
		return "POST /v1/rewards HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra + "\r\n"
	}
	kinds := []struct {
		name  string
		bytes string
	}{
		{"slow headers", "POST /v1/rewards HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 200)},
		{"declared 16 MiB, sent 10 bytes", head(fmt.Sprintf("Content-Length: %d\r\n", maxBody)) + `{"items":[`},
		{"16 MiB chunk, sent 10 bytes", head("Transfer-Encoding: chunked\r\n") + "1000000\r\n" + `{"items":[`},
		{"slow body, 64 KiB of 16 MiB", head(fmt.Sprintf("Content-Length: %d\r\n", maxBody)) + `{"items":[` + strings.Repeat(" ", slowBody-10)},
	}
	var sent int
	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	runtime.GC()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		k := kinds[i%len(kinds)]
		if _, err := c.Write([]byte(k.bytes)); err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		sent += len(k.bytes)
	}
	// Let the server read what was sent; every handler is then blocked
	// reading a body that will not come.
	time.Sleep(500 * time.Millisecond)
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	heap := int64(during.HeapInuse) - int64(before.HeapInuse)
	alloc := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	stack := int64(during.StackInuse) - int64(before.StackInuse)
	bound := int64(clients*perConnHeapBound + sentFactor*float64(sent))
	t.Logf("%d clients sent %d bytes: heap in use +%d (%d per client), heap alloc +%d, stacks +%d; bound %d",
		clients, sent, heap, heap/clients, alloc, stack, bound)
	if heap > bound || alloc > bound {
		t.Fatalf("heap grew by %d in use, %d allocated with %d hostile clients connected, want at most %d (%d per connection + %v × %d bytes sent)",
			heap, alloc, clients, bound, perConnHeapBound, sentFactor, sent)
	}
	for _, c := range conns {
		c.Close()
	}
	if code, body := post(t, s.url+"/slime", `{"response":"<answer>[140, 160]</answer>","label":"150"}`); code != 200 || body != "1.56" {
		t.Fatalf("POST /slime after the hostile clients = %d %s", code, body)
	}
}
