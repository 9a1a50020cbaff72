package a

import "testing"

func TestPass(t *testing.T) {}

func TestFail(t *testing.T) { t.Error("boom") }

func TestSkip(t *testing.T) { t.Skip("missing widget: gone") }

func TestSub(t *testing.T) {
	t.Run("x", func(t *testing.T) {})
	t.Run("y", func(t *testing.T) { t.Skip("missing widget: gone") })
	t.Run("z", func(t *testing.T) { t.Skip() })
}
