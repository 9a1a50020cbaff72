// Command tokbench measures the Qwen tokenizer on about 6 MB of text it has
// not seen — Go sources and documentation from GOROOT, Debian's license
// texts and seeded random Unicode — on one core, and runs Hugging Face's
// tokenizers (npm tokenizers@0.23.2, the Rust library transformers runs) on
// the same documents with encodeBatch on every core. It checks that every
// document's ids are equal and prints both throughputs and their ratio.
//
//	go run ./tools/tokbench [-dir DIR] [-mb 6] [-rounds 3] [-parts] [-cpuprofile FILE]
//
// -parts also prints the Go side's throughput on each part of the corpus
// (license texts, Go sources and docs, random Unicode), from the same rounds.
//
// The reference needs Node.js and the npm package installed under
// $BAGEN_DATA_CACHE/hf (make bench-tokenizer does that); without it only the
// Go side is timed.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"bagen-data/internal/cache"
	"bagen-data/tokenizer"
)

func main() {
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed after)")
	mb := flag.Float64("mb", 6, "corpus size in MB")
	rounds := flag.Int("rounds", 3, "timed rounds per side; each side's best is reported")
	tok := flag.String("tokenizer", "", "tokenizer.json (default: the cached Qwen tokenizer)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the Go rounds to this file")
	parts := flag.Bool("parts", false, "also print the Go side's MB/s on each part of the corpus")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tokbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*dir, int(*mb*1e6), *rounds, *tok, *parts); err != nil {
		fmt.Fprintln(os.Stderr, "tokbench:", err)
		os.Exit(1)
	}
}

func run(dir string, size, rounds int, tokPath string, showParts bool) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "tokbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if tokPath == "" {
		tokPath = tokenizer.DefaultPath()
	}
	docs, parts, err := corpus(size)
	if err != nil {
		return err
	}
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	corpusFile := filepath.Join(dir, "corpus.jsonl")
	if err := writeJSONL(corpusFile, docs); err != nil {
		return err
	}
	fmt.Printf("corpus: %d documents, %.2f MB (Go sources and docs, license texts, random Unicode)\n", len(docs), float64(total)/1e6)

	goIDs, goBest, partBest, cpuBest, err := timeGo(tokPath, docs, parts, rounds)
	if err != nil {
		return err
	}
	goMBs := float64(total) / 1e6 / goBest.Seconds()
	fmt.Printf("bagen-data tokenizer, 1 goroutine, GOMAXPROCS=1: best of %d %.3f s  %6.1f MB/s\n", rounds, goBest.Seconds(), goMBs)
	if cpuBest > 0 {
		fmt.Printf("  its thread's CPU time: best of %d %.3f s  %6.1f MB/s\n", rounds, cpuBest.Seconds(), float64(total)/1e6/cpuBest.Seconds())
	}
	if showParts {
		for i, p := range parts {
			n := 0
			for _, d := range docs[p.start:p.end] {
				n += len(d)
			}
			fmt.Printf("  %-14s %4d documents %5.2f MB: best of %d %.3f s  %6.1f MB/s\n",
				p.name, p.end-p.start, float64(n)/1e6, rounds, partBest[i].Seconds(), float64(n)/1e6/partBest[i].Seconds())
		}
	}

	hfDir, _ := cache.Path("hf")
	if _, err := os.Stat(filepath.Join(hfDir, "node_modules", "tokenizers", "package.json")); err != nil {
		fmt.Println("Hugging Face tokenizers: not installed (make bench-tokenizer installs it); reference skipped")
		return nil
	}
	hfOut := filepath.Join(dir, "hf-ids.jsonl")
	script, err := filepath.Abs(filepath.Join("tools", "tokbench", "hf.mjs"))
	if err != nil {
		return err
	}
	cmd := exec.Command("node", script, tokPath, corpusFile, hfOut, fmt.Sprint(rounds))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(hfDir, "node_modules"))
	cmd.Dir = hfDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hf.mjs: %w", err)
	}
	var hf struct {
		Seconds float64 `json:"seconds"`
		Threads int     `json:"threads"`
	}
	if err := json.Unmarshal(out, &hf); err != nil {
		return fmt.Errorf("hf.mjs output %q: %w", out, err)
	}
	if err := compare(hfOut, goIDs); err != nil {
		return err
	}
	hfMBs := float64(total) / 1e6 / hf.Seconds
	fmt.Printf("Hugging Face tokenizers 0.23.2, encodeBatch, %d cores: best of %d %.3f s  %6.1f MB/s\n", hf.Threads, rounds, hf.Seconds, hfMBs)
	fmt.Printf("ids: equal on all %d documents\n", len(docs))
	fmt.Printf("ratio: %.1fx\n", goMBs/hfMBs)
	return nil
}

// timeGo encodes every document with a new tokenizer per round (an empty
// word cache: the text is unseen) on one core and returns the ids of the
// last round, the best round's time, each part's best time and the best
// round's CPU time of the encoding thread (0 where the system does not
// report it), which other processes' load moves less than the wall time.
func timeGo(path string, docs []string, parts []part, rounds int) ([][]int, time.Duration, []time.Duration, time.Duration, error) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ids [][]int
	best, cpuBest := time.Duration(1<<63-1), time.Duration(1<<63-1)
	partBest := make([]time.Duration, len(parts))
	for i := range partBest {
		partBest[i] = best
	}
	for range rounds {
		tk, err := tokenizer.Load(path)
		if err != nil {
			return nil, 0, nil, 0, err
		}
		runtime.GC()
		ids = make([][]int, len(docs))
		var sum time.Duration
		cpu0 := threadCPU()
		for k, p := range parts {
			start := time.Now()
			for i := p.start; i < p.end; i++ {
				ids[i] = tk.Encode(docs[i])
			}
			d := time.Since(start)
			partBest[k] = min(partBest[k], d)
			sum += d
		}
		cpuBest = min(cpuBest, threadCPU()-cpu0)
		best = min(best, sum)
	}
	return ids, best, partBest, cpuBest, nil
}

// threadCPU returns the calling OS thread's CPU time (user and system), or
// 0 where getrusage(RUSAGE_THREAD) is not available.
func threadCPU() time.Duration {
	const rusageThread = 1 // Linux
	var ru syscall.Rusage
	if runtime.GOOS != "linux" || syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// compare checks the reference's ids, one JSON array a line, against ids.
func compare(path string, ids [][]int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	i := 0
	for ; sc.Scan(); i++ {
		var ref []int
		if err := json.Unmarshal(sc.Bytes(), &ref); err != nil {
			return fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if i >= len(ids) {
			return fmt.Errorf("%s: more documents than the corpus", path)
		}
		if !slices.Equal(ref, ids[i]) {
			j := 0
			for j < len(ref) && j < len(ids[i]) && ref[j] == ids[i][j] {
				j++
			}
			return fmt.Errorf("document %d: ids differ from Hugging Face's at token %d (%d vs %d tokens)", i, j, len(ids[i]), len(ref))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if i != len(ids) {
		return fmt.Errorf("%s: %d documents, want %d", path, i, len(ids))
	}
	return nil
}

// part is a range of the corpus's documents.
type part struct {
	name       string
	start, end int
}

// corpus gathers about size bytes: every Debian license text, Go sources and
// docs from GOROOT in path order (up to five sixths of the size), and random
// Unicode documents of 4 KB (the rest), all deterministic for one Go
// release. parts names the three ranges of docs, in order.
func corpus(size int) (docs []string, parts []part, err error) {
	n := 0
	add := func(s string) {
		if utf8.ValidString(s) && s != "" {
			docs = append(docs, s)
			n += len(s)
		}
	}
	mark := func(name string) {
		start := 0
		if len(parts) > 0 {
			start = parts[len(parts)-1].end
		}
		parts = append(parts, part{name, start, len(docs)})
	}
	lic, _ := filepath.Glob("/usr/share/common-licenses/*")
	slices.Sort(lic)
	for _, p := range lic {
		if b, err := os.ReadFile(p); err == nil {
			add(string(b))
		}
	}
	mark("licenses")
	goal := size * 5 / 6
	root := filepath.Join(goRoot(), "src")
	stop := errors.New("enough")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || n >= goal {
			if n >= goal {
				return stop
			}
			return err
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".txt") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(b) > 0 && len(b) <= 64<<10 {
				add(string(b))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, nil, err
	}
	mark("Go")
	r := rand.New(rand.NewPCG(19, 6))
	pool := assigned()
	for n < size {
		var sb strings.Builder
		for sb.Len() < 4096 {
			switch x := r.IntN(10); {
			case x < 2:
				sb.WriteByte(' ')
			case x < 3:
				sb.WriteString([]string{"\n", "\t", "  ", "\r\n", "'s ", "123"}[r.IntN(6)])
			default:
				sb.WriteRune(pool[r.IntN(len(pool))])
			}
		}
		add(sb.String())
	}
	mark("random Unicode")
	return docs, parts, nil
}

// assigned lists the graphic runes of the Basic Multilingual Plane outside
// the private-use area, less those with a non-zero canonical combining
// class. Hugging Face's NFC normalizer has older Unicode tables than Go's:
// it does not reorder combining marks assigned since Unicode 14 (U+1AC3
// before U+08FF, U+10377 before U+10EFE), so those ids differ for a reason
// that is not the tokenizer's.
func assigned() []rune {
	var rs []rune
	for r := rune(0x20); r < 0x10000; r++ {
		if unicode.IsGraphic(r) && !unicode.Is(unicode.Co, r) && norm.NFC.PropertiesString(string(r)).CCC() == 0 {
			rs = append(rs, r)
		}
	}
	return rs
}

func writeJSONL(path string, docs []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// goRoot is the Go installation's root as `go env GOROOT` reports it, or
// "" without a go command.
func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
