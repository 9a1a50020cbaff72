package chromiumtest

import (
	"image"
	"image/color"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestColors(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for x := 0; x < 3; x++ {
		img.Set(x, 0, color.NRGBA{0x2e, 0x7d, 0x32, 0xff})
	}
	img.Set(1, 1, color.NRGBA{0xff, 0xff, 0xff, 0xff})
	want := map[string]int{"#2e7d32": 3, "#ffffff": 1, "#000000": 2}
	if diff := cmp.Diff(want, Colors(img)); diff != "" {
		t.Errorf("Colors (-want +got):\n%s", diff)
	}
}
