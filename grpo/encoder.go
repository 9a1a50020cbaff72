package grpo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/sync/errgroup"

	"bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
)

// Encoder embeds prompts with an Ollama model over POST /api/embed: the
// frozen LLM under the policy head. Embeddings are cached on disk under
// Cache, keyed by the model's digest and the prompt's hash, so repeated
// runs and epochs never embed a prompt twice. An Encoder is safe for
// concurrent use once its fields are set.
type Encoder struct {
	Client *api.Client // required
	Model  string      // required, e.g. qwen2.5:7b-instruct
	// Cache is the embedding cache directory; empty disables the cache.
	Cache string
	// Batch is prompts per request; 0 means 8.
	Batch int
	// Concurrency is requests in flight; 0 means 2.
	Concurrency int
	// Retries is attempts after a failed request (transport errors, 429,
	// 5xx) with exponential backoff; 0 means 4, negative means none.
	Retries int
	// Backoff is the first retry's delay, doubled each retry and jittered
	// as prediction.Retry does; 0 means 500ms.
	Backoff time.Duration
	// NumCtx is the context length the model embeds with (num_ctx); longer
	// prompts are truncated by the server. 0 means 8192, verl's
	// max_prompt_length in the paper's runs.
	NumCtx int
	// Progress is called with prompts embedded so far and the number to
	// embed after each request; it may be called concurrently. nil means
	// silent.
	Progress func(done, total int)
}

func (e *Encoder) batch() int       { return positive(e.Batch, 8) }
func (e *Encoder) concurrency() int { return positive(e.Concurrency, 2) }
func (e *Encoder) numCtx() int      { return positive(e.NumCtx, 8192) }
func (e *Encoder) backoff() time.Duration {
	if e.Backoff <= 0 {
		return 500 * time.Millisecond
	}
	return e.Backoff
}

func (e *Encoder) retries() int {
	switch {
	case e.Retries < 0:
		return 0
	case e.Retries == 0:
		return 4
	}
	return e.Retries
}

func positive(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Digest identifies what the embeddings depend on, from /api/show: the
// SHA-256 over the digests of the model's blobs (the sha256-… names its
// Modelfile's FROM and ADAPTER lines give), its template, its parameters
// (sorted: the server lists them in no fixed order) and num_ctx. Where the
// server keeps its models does not enter.
func (e *Encoder) Digest(ctx context.Context) (string, error) {
	show, err := e.Client.Show(ctx, &api.ShowRequest{Model: e.Model})
	if err != nil {
		return "", fmt.Errorf("show %s: %w", e.Model, err)
	}
	h := sha256.New()
	for _, blob := range blobRe.FindAllString(show.Modelfile, -1) {
		io.WriteString(h, blob+"\n")
	}
	io.WriteString(h, "\x00template="+show.Template+"\x00")
	params := strings.Split(strings.TrimSpace(show.Parameters), "\n")
	for i := range params {
		params[i] = strings.Join(strings.Fields(params[i]), " ")
	}
	slices.Sort(params)
	io.WriteString(h, strings.Join(params, "\n"))
	io.WriteString(h, "\x00num_ctx="+strconv.Itoa(e.numCtx()))
	return hex.EncodeToString(h.Sum(nil)), nil
}

var blobRe = regexp.MustCompile(`sha256[-:][0-9a-f]{64}`)

// Stats says how an Embed call went.
type Stats struct {
	Prompts  int           // distinct prompts asked for
	Cached   int           // found in the cache
	Requests int           // /api/embed requests sent, retries included
	Elapsed  time.Duration // wall time of the call
}

// Embed returns one embedding per prompt, in order. Duplicate prompts are
// embedded once.
func (e *Encoder) Embed(ctx context.Context, prompts []string) ([][]float32, Stats, error) {
	start := time.Now()
	digest, err := e.Digest(ctx)
	if err != nil {
		return nil, Stats{}, err
	}
	keys, uniq := dedupe(prompts)
	st := Stats{Prompts: len(uniq)}
	got := make(map[string][]float32, len(uniq))
	var todo []string
	for _, p := range uniq {
		if v, ok := e.load(digest, keys[p]); ok {
			got[p] = v
			st.Cached++
			continue
		}
		todo = append(todo, p)
	}
	vecs, reqs, err := e.fetch(ctx, digest, keys, todo)
	st.Requests = reqs
	if err != nil {
		return nil, st, err
	}
	for i, p := range todo {
		got[p] = vecs[i]
	}
	out := make([][]float32, len(prompts))
	for i, p := range prompts {
		out[i] = got[p]
	}
	if err := sameDim(out); err != nil {
		return nil, st, err
	}
	st.Elapsed = time.Since(start)
	return out, st, nil
}

// dedupe returns each distinct prompt's hash and the distinct prompts in
// first-seen order.
func dedupe(prompts []string) (map[string]string, []string) {
	keys := make(map[string]string, len(prompts))
	var uniq []string
	for _, p := range prompts {
		if _, ok := keys[p]; ok {
			continue
		}
		h := sha256.Sum256([]byte(p))
		keys[p] = hex.EncodeToString(h[:])
		uniq = append(uniq, p)
	}
	return keys, uniq
}

func sameDim(vs [][]float32) error {
	for i, v := range vs {
		if len(v) == 0 || len(v) != len(vs[0]) {
			return fmt.Errorf("prompt %d: %w: %d dimensions, want %d", i, ErrEmbed, len(v), len(vs[0]))
		}
	}
	return nil
}

// fetch embeds todo in batches with bounded concurrency, caching each
// result as it arrives.
func (e *Encoder) fetch(ctx context.Context, digest string, keys map[string]string, todo []string) ([][]float32, int, error) {
	out := make([][]float32, len(todo))
	var done, reqs atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(e.concurrency())
	for lo := 0; lo < len(todo); lo += e.batch() {
		hi := min(lo+e.batch(), len(todo))
		g.Go(func() error {
			vecs, n, err := e.embedRetry(ctx, todo[lo:hi])
			reqs.Add(int64(n))
			if err != nil {
				return err
			}
			for i, v := range vecs {
				if err := e.store(digest, keys[todo[lo+i]], v); err != nil {
					return err
				}
				out[lo+i] = v
			}
			e.progress(done.Add(int64(hi-lo)), len(todo))
			return nil
		})
	}
	err := g.Wait()
	return out, int(reqs.Load()), err
}

func (e *Encoder) progress(done int64, total int) {
	if e.Progress != nil {
		e.Progress(int(done), total)
	}
}

// embedRetry sends one batch under the retry policy every client of a
// remote model shares (prediction.Retry): Retries+1 attempts, backoff
// from Backoff. It returns the vectors and the number of requests sent.
func (e *Encoder) embedRetry(ctx context.Context, batch []string) ([][]float32, int, error) {
	truncate := true
	req := &api.EmbedRequest{Model: e.Model, Input: batch, Truncate: &truncate,
		Options: map[string]any{"num_ctx": e.numCtx()}}
	var vecs [][]float32
	policy := prediction.Retry{Attempts: e.retries() + 1, Backoff: e.backoff(), Timeout: prediction.NoTimeout}
	n, err := policy.Do(ctx, func(ctx context.Context) error {
		res, err := e.Client.Embed(ctx, req)
		if err != nil {
			return err
		}
		vecs = res.Embeddings
		return nil
	})
	if err != nil {
		return nil, n, fmt.Errorf("embed %s (%d prompts, %d attempts): %w", e.Model, len(batch), n, err)
	}
	if len(vecs) != len(batch) {
		return nil, n, fmt.Errorf("embed %s: %w: %d embeddings for %d prompts", e.Model, ErrEmbed, len(vecs), len(batch))
	}
	return vecs, n, nil
}

func (e *Encoder) path(digest, key string) string {
	return filepath.Join(e.Cache, digest[:16], key[:2], key+".f32")
}

// load reads a cached embedding: little-endian float32s.
func (e *Encoder) load(digest, key string) ([]float32, bool) {
	if e.Cache == "" {
		return nil, false
	}
	b, err := os.ReadFile(e.path(digest, key))
	if err != nil || len(b) == 0 || len(b)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

func (e *Encoder) store(digest, key string, v []float32) error {
	if e.Cache == "" {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	p := e.path(digest, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	if err := atomicfile.WriteFile(p, b); err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	return nil
}
