// Package ollamatest runs a real Ollama server with a tiny Qwen2 model for
// tests (and for `make repro` without a real model): the binary `make
// ollama` builds into the cache directory, on a free loopback port, with a
// temporary model store.
//
// Tests call Start; a package whose tests start several servers can share
// one converted model among them with
//
//	func TestMain(m *testing.M) { ollamatest.Main(m) }
//
// Without Main every Start converts the model into its own temporary store
// (a few seconds each).
package ollamatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bagen-data/internal/testenv"

	"github.com/ollama/ollama/api"

	"bagen-data/internal/cache"
	"bagen-data/internal/tinymodel"
)

// Model is the name the tiny model is created under.
const Model = "tiny-qwen"

// Server is a running `ollama serve`. It is safe for concurrent use. A
// server from Start has Model created and stops when its test ends; one
// from Launch runs until Stop.
type Server struct {
	// Host is the server's base URL, http://127.0.0.1:PORT.
	Host string
	// Model is the name of the tiny model on this server.
	Model string

	cmd    *exec.Cmd
	logs   *syncBuffer
	home   string
	exited chan error
}

// Client returns an Ollama API client for the server.
func (s *Server) Client() *api.Client {
	u, err := url.Parse(s.Host)
	if err != nil {
		panic("ollamatest: bad host " + s.Host)
	}
	return api.NewClient(u, http.DefaultClient)
}

// Logs returns what the server has written to stdout and stderr so far.
func (s *Server) Logs() string { return s.logs.String() }

// CacheDir is bagen-data's cache directory (internal/cache), or the
// system's temporary directory when there is none.
func CacheDir() string {
	d, err := cache.Dir()
	if err != nil {
		return os.TempDir()
	}
	return d
}

// Binary is where `make ollama` installs the server.
func Binary() string { return filepath.Join(CacheDir(), "bin", "ollama") }

// tokenizerPath is where `make tokenizer` puts Qwen's tokenizer.json.
func tokenizerPath() string { return filepath.Join(CacheDir(), "qwen-tokenizer.json") }

// shared is the model store Main sets up for a whole test binary.
var shared struct {
	dir  string    // empty unless Main is running
	once sync.Once // creates the model in dir
	err  error     // result of once
}

// Main runs the tests of a package with one model store shared by every
// Start, removes it afterwards and exits with the tests' status.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "ollamatest-models-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ollamatest: %v\n", err)
		os.Exit(1)
	}
	shared.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Start starts `ollama serve` on a free loopback port and creates Model on
// it. It skips the test when the Ollama binary or Qwen's tokenizer is not
// installed, and fails it when the server does not come up. The server is
// stopped in t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	testenv.Need(t, "Ollama", Available())
	models := shared.dir
	if models == "" {
		models = t.TempDir()
	}
	s, err := Launch(models)
	if err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	t.Cleanup(s.Stop)
	if err := ensureModel(s, models); err != nil {
		t.Fatalf("ollamatest: %v\nserver log:\n%s", err, s.Logs())
	}
	return s
}

// Available reports why the server cannot run here: no binary (run `make
// ollama`) or no tokenizer (run `make tokenizer`); nil when it can.
func Available() error {
	if _, err := os.Stat(Binary()); err != nil {
		return fmt.Errorf("no Ollama server at %s; run `make ollama` to build it", Binary())
	}
	if _, err := os.Stat(tokenizerPath()); err != nil {
		return fmt.Errorf("no Qwen tokenizer at %s; run `make tokenizer`", tokenizerPath())
	}
	return nil
}

// ensureModel creates Model on s, once per store.
func ensureModel(s *Server, models string) error {
	if models != shared.dir {
		return s.Create()
	}
	shared.once.Do(func() { shared.err = s.Create() })
	return shared.err
}

// Create writes the tiny model into a temporary directory and runs
// `ollama create` for Model against s.
func (s *Server) Create() error {
	dir, err := os.MkdirTemp("", "ollamatest-tiny-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := tinymodel.Write(dir, tinymodel.Config{}, tokenizerPath()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(), "create", Model, "-f", filepath.Join(dir, "Modelfile"))
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+strings.TrimPrefix(s.Host, "http://"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ollama create %s: %w\n%s", Model, err, out)
	}
	return nil
}

// Launch starts `ollama serve` on a free loopback port with models as its
// model store, retrying when the chosen port was taken between picking and
// binding it. The caller stops it with Stop.
func Launch(models string) (*Server, error) {
	var err error
	for range 3 {
		var s *Server
		if s, err = launchOnce(models); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func launchOnce(models string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "ollamatest-home-")
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s := &Server{Host: "http://" + addr, Model: Model, logs: &syncBuffer{}, home: home, exited: make(chan error, 1)}
	s.cmd = exec.Command(Binary(), "serve")
	s.cmd.Env = append(os.Environ(),
		"OLLAMA_HOST="+addr,
		"OLLAMA_MODELS="+models,
		"HOME="+home, // the server writes its key pair under $HOME/.ollama
		"OLLAMA_NOPRUNE=1",
		// llama.cpp's CPU flash attention is ~6× slower than plain
		// attention on the tiny model's 16-wide heads at 8k tokens.
		"OLLAMA_FLASH_ATTENTION=0",
	)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	setGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("start %s: %w", Binary(), err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	if err := s.wait(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, s.Logs())
	}
	return s, nil
}

// wait polls the server until it answers, exits or timeout passes.
func (s *Server) wait(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := s.Client()
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Heartbeat(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err // for Stop
			return fmt.Errorf("ollama serve exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("ollama serve did not answer within " + timeout.String())
}

// Stop interrupts the server and its runners, kills them after 10 s, and
// removes the server's home directory. The model store is the caller's.
func (s *Server) Stop() {
	signalGroup(s.cmd, false)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		signalGroup(s.cmd, true)
		<-s.exited
	}
	os.RemoveAll(s.home)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for the server's two output streams
// and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
