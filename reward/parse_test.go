package reward

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	iv := func(lo, hi int64) Prediction { return Prediction{Kind: Interval, Low: lo, High: hi} }
	sc := func(v int64) Prediction { return Prediction{Kind: Scalar, Low: v, High: v} }
	imp := Prediction{Kind: Impossible}
	bad := Prediction{}
	tests := []struct {
		name, in string
		want     Prediction
	}{
		{"interval", "<answer>[100, 200]</answer>", iv(100, 200)},
		{"after think", "<think>about 150</think><answer>[100,200]</answer>", iv(100, 200)},
		{"whitespace around numbers", "<answer>\n [ 100 ,\t200 ] \n</answer>", iv(100, 200)},
		{"newlines inside brackets", "<answer>[\n100\r\n,\f200\v]</answer>", iv(100, 200)},
		{"zero interval", "<answer>[0, 0]</answer>", iv(0, 0)},
		{"reversed kept as read", "<answer>[300, 100]</answer>", iv(300, 100)},
		{"interval inside prose", "<answer>about [100, 200] tokens</answer>", iv(100, 200)},
		{"first interval wins", "<answer>[1, 2] or [3, 4]</answer>", iv(1, 2)},
		{"double bracket", "<answer>[[1, 2]]</answer>", iv(1, 2)},
		{"skips a non-interval bracket", "<answer>[a, 2] then [5, 6]</answer>", iv(5, 6)},
		{"leading zeros", "<answer>[007, 010]</answer>", iv(7, 10)},
		{"saturates past int64", "<answer>[99999999999999999999, 1]</answer>", iv(math.MaxInt64, 1)},
		{"first answer wins", "<answer>impossible</answer><answer>[1, 2]</answer>", imp},
		{"nested open tag is content", "<answer><answer>[1, 2]</answer></answer>", iv(1, 2)},
		{"probe example in think is the first answer", "<think>format <answer>[est_low, est_high]</answer></think><answer>[5, 6]</answer>", bad},
		{"impossible", "<answer>impossible</answer>", imp},
		{"impossible any case and padded", "<answer>  IMPOSSIBLE \n</answer>", imp},
		{"impossible trimmed of unicode space", "<answer>\u00a0Impossible\u3000</answer>", imp},
		{"long s is not s", "<answer>impoſſible</answer>", bad},
		{"dotted capital I is not I", "<answer>IMPOSSİBLE</answer>", bad},
		{"impossible with period", "<answer>impossible.</answer>", bad},
		{"impossible in a sentence", "<answer>it is impossible</answer>", bad},
		{"scalar", "<answer>1500</answer>", sc(1500)},
		{"scalar padded with zeros", "<answer> 007 </answer>", sc(7)},
		{"signed scalar", "<answer>+5</answer>", bad},
		{"negative scalar", "<answer>-5</answer>", bad},
		{"scalar with comma", "<answer>1,500</answer>", bad},
		{"scalar with unit", "<answer>1500 tokens</answer>", bad},
		{"decimal interval", "<answer>[1.5, 2]</answer>", bad},
		{"negative bound", "<answer>[-1, 2]</answer>", bad},
		{"missing comma", "<answer>[1 2]</answer>", bad},
		{"parentheses", "<answer>(1, 2)</answer>", bad},
		{"full-width digits", "<answer>[１００, ２００]</answer>", iv(100, 200)},
		{"mixed scripts in one number", "<answer>[1٠0, \U0001D7D0\u0966]</answer>", iv(100, 20)},
		{"full-width scalar", "<answer>１５００</answer>", sc(1500)},
		{"superscript is not a decimal digit", "<answer>[\u00b9, 2]</answer>", bad},
		{"roman numeral is not a decimal digit", "<answer>\u216b</answer>", bad},
		{"unicode space inside brackets", "<answer>[\u00a01,\u20002\u3000]</answer>", iv(1, 2)},
		{"information separators trimmed", "<answer>\x1c\x1dimpossible\x1e\x1f</answer>", imp},
		{"information separators inside brackets", "<answer>[\x1f1, 2\x1c]</answer>", iv(1, 2)},
		{"zero-width space is not white space", "<answer>\u200bimpossible</answer>", bad},
		{"NEL trims a scalar", "<answer>\u0085 42\u2029</answer>", sc(42)},
		{"unclosed bracket", "<answer>[1, 2</answer>", bad},
		{"empty answer", "<answer></answer>", bad},
		{"no tags", "[1, 2]", bad},
		{"no closing tag", "<answer>[1, 2]", bad},
		{"broken closing tag", "<answer>[1, 2]</answer", bad},
		{"tags are case-sensitive", "<ANSWER>[1, 2]</ANSWER>", bad},
		{"empty response", "", bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.in); got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"trimmed", "x<answer> a b \n</answer>y", "a b", true},
		{"multiline content", "<answer>a\nb</answer>", "a\nb", true},
		{"first pair", "<answer>1</answer><answer>2</answer>", "1", true},
		{"close before open is ignored", "</answer><answer>1</answer>", "1", true},
		{"none", "answer: 1", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Answer(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Answer(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestKindAndClassStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Unparseable.String(), "unparseable"},
		{Impossible.String(), "impossible"},
		{Interval.String(), "interval"},
		{Scalar.String(), "scalar"},
		{Kind(9).String(), "kind(9)"},
		{ClassInvalid.String(), "invalid"},
		{ClassPossible.String(), "possible"},
		{ClassImpossible.String(), "impossible"},
		{Class(7).String(), "class(7)"},
		{TimeWeeks.String(), "time_weeks"},
		{WarehouseItemWeeks.String(), "warehouse_item_weeks"},
		{CumulativeCostUSD.String(), "cumulative_cost_usd"},
		{Dim(3).String(), "dim(3)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestPredictionClass(t *testing.T) {
	tests := []struct {
		p     Prediction
		class Class
		valid bool
	}{
		{Prediction{}, ClassInvalid, false},
		{Prediction{Kind: Impossible}, ClassImpossible, false},
		{Prediction{Kind: Interval, Low: 1, High: 2}, ClassPossible, true},
		{Prediction{Kind: Interval, Low: 2, High: 2}, ClassPossible, true},
		{Prediction{Kind: Interval, Low: 3, High: 2}, ClassPossible, false},
		{Prediction{Kind: Scalar, Low: 2, High: 2}, ClassPossible, false},
	}
	for _, tt := range tests {
		if c, v := tt.p.Class(), tt.p.Valid(); c != tt.class || v != tt.valid {
			t.Errorf("%+v: Class, Valid = %v, %v; want %v, %v", tt.p, c, v, tt.class, tt.valid)
		}
	}
}
