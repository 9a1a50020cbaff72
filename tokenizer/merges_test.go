package tokenizer

import "testing"

// TestMergeFilter checks that the Bloom filter in front of the merge table
// lets every merge of Qwen's tokenizer through with its rank, and that it
// answers most pairs without a merge by itself.
func TestMergeFilter(t *testing.T) {
	tk := qwenTokenizer(t)
	n := 0
	for _, s := range tk.merges.slots {
		if s == emptySlot {
			continue
		}
		n++
		if got, want := tk.merges.rank(s>>rankBits), uint32(s&maxRank); got != want {
			t.Fatalf("pair key %#x: rank %d, want %d", s>>rankBits, got, want)
		}
	}
	if n != len(tk.mergeTo) {
		t.Errorf("%d merges in the table, want %d", n, len(tk.mergeTo))
	}
	passed := 0
	for a := int32(1000); a < 1100; a++ {
		for b := int32(50000); b < 50100; b++ {
			key := pairKey(a, b)
			if bit := filterBit(key); tk.merges.filter[bit/64]&(1<<(bit%64)) != 0 {
				passed++
			}
		}
	}
	if passed > 10000/4 {
		t.Errorf("the filter lets %d of 10000 pairs through, want fewer than a quarter", passed)
	}
}
