package dataset

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// stepReader returns its data in reads of the given sizes, in turn, then
// err (io.EOF when nil).
type stepReader struct {
	data  []byte
	steps []int
	i     int
	err   error
}

func (r *stepReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), r.steps[r.i%len(r.steps)])
	r.i++
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// asyncHash's digest is SHA-256 of exactly the bytes its reads returned,
// whatever the sizes of the reads below it and of the caller's buffers
// (pieces larger than a hash buffer included), and the bytes pass through
// unchanged.
func TestAsyncHash(t *testing.T) {
	data := make([]byte, 3*hashBufferSize+hashBufferSize/2+7)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	want := sha256.Sum256(data)
	for _, c := range []struct {
		steps []int
		buf   int
		size  int64 // the size hint
	}{
		{[]int{1}, 3, 0},
		{[]int{4095, 1, 70000}, 64 << 10, 5000},
		{[]int{hashBufferSize + 7}, 3 * hashBufferSize, int64(len(data))},
		{[]int{len(data)}, len(data), 0},
	} {
		h := newAsyncHash(&stepReader{data: data, steps: c.steps}, c.size)
		var out bytes.Buffer
		if _, err := io.CopyBuffer(&out, struct{ io.Reader }{h}, make([]byte, c.buf)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("steps %v, buffer %d: the bytes read differ from the input", c.steps, c.buf)
		}
		if got := h.Sum(); !bytes.Equal(got, want[:]) {
			t.Fatalf("steps %v, buffer %d: digest %x, want %x", c.steps, c.buf, got, want)
		}
	}
	empty := newAsyncHash(bytes.NewReader(nil), 0)
	if got, want := empty.Sum(), sha256.Sum256(nil); !bytes.Equal(got, want[:]) {
		t.Fatalf("empty input: digest %x, want %x", got, want)
	}
}

// A read error comes back as it is, with the bytes before it hashed, and
// closing without a digest stops the hashing goroutine.
func TestAsyncHashErrorAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	boom := errors.New("disk on fire")
	h := newAsyncHash(&stepReader{data: []byte("abcdef"), steps: []int{4}, err: boom}, 6)
	got, err := io.ReadAll(h)
	if !errors.Is(err, boom) || string(got) != "abcdef" {
		t.Fatalf("ReadAll = %q, %v; want %q, %v", got, err, "abcdef", boom)
	}
	if sum, want := h.Sum(), sha256.Sum256([]byte("abcdef")); !bytes.Equal(sum, want[:]) {
		t.Fatalf("digest %x, want %x", sum, want)
	}
	for range 100 {
		h := newAsyncHash(bytes.NewReader(make([]byte, 10000)), 10000)
		io.ReadFull(h, make([]byte, 5000))
		h.close()
		h.close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after closing 101 hashes, %d before", n, before)
	}
}
