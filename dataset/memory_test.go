package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// hugeMessage writes n trajectories of 6 turns whose third user message
// is size bytes of text; all succeed within budget.
func hugeMessage(n, size int) []byte {
	var b bytes.Buffer
	big := strings.Repeat("word ", size/5)
	for i := range n {
		msgs := []map[string]any{{"role": "system", "content": probes.Tasks["sokoban"].System, "tokens": 90}}
		for k := range 6 {
			text, tokens := "small observation", 3
			if k == 2 {
				text, tokens = big, size/5
			}
			msgs = append(msgs,
				map[string]any{"role": "user", "content": text, "tokens": tokens},
				map[string]any{"role": "assistant", "content": "<answer>ok</answer>", "tokens": 5})
		}
		line, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("h%d", i), "budget": 3 * size / 5,
			"messages": msgs, "metadata": map[string]any{"success": true}})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// peakHeap runs fn and returns the largest HeapInuse seen while it ran
// (sampled every millisecond) above what was in use before.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return peak - base
}

// An 8 MB message (the readers' default limit) costs the build a few times
// its size, not the hundreds of MB the parquet writer's page statistics
// and the rows in flight used to take.
func TestBuildMemoryHugeMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 40 MB input")
	}
	const size = 8_000_000
	dir := t.TempDir()
	src := writeInput(t, dir, "huge.jsonl", hugeMessage(5, size))
	cfg := testConfig()
	cfg.SplitByTrajectory = true
	cfg.Ratio = Ratio{SFT: 40, RL: 40, Eval: 20}
	var m *Manifest
	var err error
	peak := peakHeap(func() {
		m, err = Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, "out"), cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows := m.Splits.SFT.Rows.Total() + m.Splits.RL.Rows.Total() + m.Splits.Eval.Rows.Total(); rows != 54 {
		t.Fatalf("%d rows, want 54", rows)
	}
	// Measured: about 250 MB of heap in use, garbage included (the writer's
	// page statistics alone took 700 MB). The bound is the README's.
	if limit := uint64(64<<20 + 32*size); peak > limit {
		t.Errorf("peak heap in use %d MB, want at most %d MB for a %d MB message", peak>>20, limit>>20, size/1_000_000)
	}
}
