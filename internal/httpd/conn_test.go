package httpd

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCannedErrorLeavesResponsesAlone(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nDate: x\r\n\r\n{\"error\":\"x\"}",
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\n",
		`{"error":"HTTP/1.1 400 Bad Request"}`,
		"HTTP/1.1 4x0 Bad\r\n",
		"",
	} {
		if pe, ok := Canned([]byte(p), 1); ok {
			t.Errorf("Canned(%q) = %v, want no match", p, pe)
		}
	}
}

// FuzzCannedError: whatever net/http (or anything) writes, Canned
// never panics, and a match becomes a whole response with the same status
// and a JSON error body.
func FuzzCannedError(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 400 Bad Request" + errorHeaders + "400 Bad Request",
		"HTTP/1.1 400 Bad Request: missing required Host header" + errorHeaders + "400 Bad Request: missing required Host header",
		"HTTP/1.1 431 Request Header Fields Too Large" + errorHeaders + "431 Request Header Fields Too Large",
		"HTTP/1.1 501 Not Implemented" + errorHeaders + "Unsupported transfer encoding",
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		pe, ok := Canned(p, 64<<10)
		if !ok {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(AppendResponse(nil, pe.Code, AppendError(nil, pe.Text))))), nil)
		if err != nil {
			t.Fatalf("Canned(%q): response does not parse: %v", p, err)
		}
		var body struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&body)
		want := pe.Error()
		if !utf8.ValidString(want) {
			want = body.Error // AppendString replaced the invalid bytes
		}
		if err != nil || body.Error == "" || body.Error != want || strconv.Itoa(resp.StatusCode) != string(p[9:12]) {
			t.Fatalf("Canned(%q): %d %q %v, want status %s and the error in JSON", p, resp.StatusCode, body.Error, err, p[9:12])
		}
	})
}
