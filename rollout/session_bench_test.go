package rollout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkConvertSessions converts 30 copies of every generated session
// (Claude Code, Codex, Qwen Code; 20 MB) to canonical JSONL: the whole
// convert path, reading, detecting, decoding and writing, in MB/s of
// input. `go test -run XXX -bench ConvertSessions -cpu 1 ./rollout/`.
func BenchmarkConvertSessions(b *testing.B) {
	dir := b.TempDir()
	var total int64
	for _, g := range loadGeneratedB(b) {
		data, err := os.ReadFile(filepath.Join("testdata/sessions", g))
		if err != nil {
			b.Fatal(err)
		}
		for k := 0; k < 30; k++ {
			p := filepath.Join(dir, filepath.Dir(g), fmt.Sprintf("%02d-%s", k, filepath.Base(g)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
			total += int64(len(data))
		}
	}
	srcs, err := Expand([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "out.jsonl")
	b.SetBytes(total)
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() {
		// The machine may be shared: MB per CPU-second of this process
		// (user + system, every thread) is the single-core throughput.
		b.ReportMetric(float64(total)*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "MB/cpu-s")
	}()
	for i := 0; i < b.N; i++ {
		sum, err := Convert(context.Background(), srcs, out, ConvertOptions{PrefixIDs: true})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Trajectories != 9*30 {
			b.Fatalf("%d trajectories, want %d", sum.Trajectories, 9*30)
		}
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadGeneratedB lists the generated session files, relative to
// testdata/sessions.
func loadGeneratedB(b *testing.B) []string {
	var files []string
	err := filepath.Walk("testdata/sessions", func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Base(p) != "usage_record.jsonl" {
			rel, _ := filepath.Rel("testdata/sessions", p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil || len(files) != 9 {
		b.Fatalf("%d session files (%v), want 9", len(files), err)
	}
	return files
}
