package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress draws a one-line progress report on a terminal. It stays silent
// for the first second (short jobs print nothing) and when out is not a
// terminal. It is safe for concurrent use.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	on    bool
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(quiet bool) *progress {
	on := !quiet && term.IsTerminal(int(os.Stderr.Fd()))
	return &progress{out: os.Stderr, on: on, start: time.Now()}
}

// update reports done of total (total 0 when unknown) for a stage.
func (p *progress) update(stage string, done, total int64) { p.updateNote(stage, done, total, "") }

// updateNote is update with a note after the counts (a rate, an ETA).
func (p *progress) updateNote(stage string, done, total int64, note string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond && done != total {
		return
	}
	p.last, p.drawn = now, true
	if total <= 0 {
		fmt.Fprintf(p.out, "\r\033[K%s: %d", stage, done)
		return
	}
	const width = 30
	fill := int(width * done / total)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if i < fill {
			bar[i] = '='
		}
	}
	if note != "" {
		note = " " + note
	}
	fmt.Fprintf(p.out, "\r\033[K%-12s [%s] %d/%d%s", stage, bar, done, total, note)
}

// rate is the note of a stage that has done of total since the progress
// began: its rate per second and the time left at that rate.
func (p *progress) rate(done, total int64, unit string) string {
	return rateNote(done, total, time.Since(p.start), unit)
}

func rateNote(done, total int64, elapsed time.Duration, unit string) string {
	if done <= 0 || elapsed <= 0 {
		return ""
	}
	perSec := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / perSec * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%.1f %s/s, %s left", perSec, unit, left)
}

// done clears the line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.out, "\r\033[K")
	}
}
