// Package chromiumtest runs headless Chromium for tests that check what a
// browser makes of a page: the DOM after its scripts ran (--dump-dom) and
// the pixels it paints (--screenshot).
package chromiumtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"bagen-data/internal/testenv"
)

// Find is the path of a Chromium or Chrome binary: $BAGEN_CHROMIUM, else
// the first of chromium, chromium-browser, google-chrome and
// google-chrome-stable on PATH. When there is none it ends tb through
// testenv.Need.
func Find(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{os.Getenv("BAGEN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Need(tb, "chromium", errors.New("none of $BAGEN_CHROMIUM, chromium, chromium-browser, google-chrome found (make chromium)"))
	return ""
}

// Run runs bin headless with args, in a fresh profile and at most two
// minutes, and returns its standard output; a failure ends tb.
func Run(tb testing.TB, bin string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + tb.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return out
}

// Screenshot renders url in a window of width × height pixels (args
// added to the command line) and returns the decoded PNG; a failure ends
// tb.
func Screenshot(tb testing.TB, bin, url string, width, height int, args ...string) image.Image {
	tb.Helper()
	shot := filepath.Join(tb.TempDir(), "screenshot.png")
	args = append(args, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", width, height), "--hide-scrollbars", url)
	Run(tb, bin, args...)
	f, err := os.Open(shot)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatalf("screenshot of %s: %v", url, err)
	}
	return img
}

// Colors counts the pixels of img of each exact colour, as "#rrggbb".
func Colors(img image.Image) map[string]int {
	out := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out[hex(c)]++
		}
	}
	return out
}

func hex(c color.NRGBA) string {
	const digits = "0123456789abcdef"
	return string([]byte{'#', digits[c.R>>4], digits[c.R&15], digits[c.G>>4], digits[c.G&15], digits[c.B>>4], digits[c.B&15]})
}
