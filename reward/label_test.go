package reward

import (
	"errors"
	"testing"
)

func TestParseTarget(t *testing.T) {
	wh := func(possible bool, a, b, c float64) Target {
		return WarehouseTarget(WarehouseTruth{Remaining: [3]float64{a, b, c}, Possible: possible})
	}
	tok := func(r int64) Target { return TokenTarget(Truth{Remaining: r, Possible: true}, "") }
	tests := []struct {
		name, in string
		want     Target
		err      string
	}{
		{name: "build label possible", in: `{"remaining_tokens":450,"is_possible":true,"ground_truth":"[405, 495]"}`, want: tok(450)},
		{name: "build label impossible", in: `{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`, want: Target{}},
		{name: "impossible keeps remaining", in: `{"remaining_tokens":900,"is_possible":false}`, want: TokenTarget(Truth{Remaining: 900}, "")},
		{name: "build label of a failed run", in: `{"remaining_tokens":2200,"is_possible":false,"ground_truth":"impossible"}`, want: TokenTarget(Truth{Remaining: 2200}, "")},
		{name: "impossible null remaining", in: `{"remaining_tokens":null,"is_possible":false}`, want: Target{}},
		{name: "impossible negative remaining", in: `{"remaining_tokens":-3,"is_possible":false}`, err: "invalid label: remaining_tokens: want a non-negative integer, got -3"},
		{name: "long s is not impossible", in: "impo\u017f\u017fible", err: `invalid label: want a JSON object, "impossible" or a non-negative integer, got "impoſſible"`},
		{name: "impossible without remaining", in: `{"is_possible":false}`, want: Target{}},
		{name: "key order and spacing", in: " { \"is_possible\" : true , \"remaining_tokens\" : 7 } ", want: tok(7)},
		{name: "unknown keys skipped", in: `{"x":{"y":[1,"z"]},"remaining_tokens":3,"is_possible":true}`, want: tok(3)},
		{name: "last duplicate wins", in: `{"remaining_tokens":3,"is_possible":true,"remaining_tokens":4}`, want: tok(4)},
		{name: "escaped key", in: `{"remaining\u005ftokens":5,"is_possible":true}`, want: tok(5)},
		{name: "bare impossible", in: "impossible", want: Target{}},
		{name: "bare impossible any case padded", in: " Impossible\n", want: Target{}},
		{name: "bare integer", in: "1234", want: tok(1234)},
		{name: "bare zero", in: "0", want: tok(0)},
		{name: "bare max int64", in: "9223372036854775807", want: tok(9223372036854775807)},
		{name: "warehouse possible", in: `{"is_possible":true,"time_weeks":2,"warehouse_item_weeks":12.5,"cumulative_cost_usd":1500.25}`, want: wh(true, 2, 12.5, 1500.25)},
		{name: "warehouse impossible", in: `{"is_possible":false,"time_weeks":null}`, want: wh(false, 0, 0, 0)},
		{name: "warehouse impossible without dims values", in: `{"is_possible":false,"cumulative_cost_usd":9}`, want: wh(false, 0, 0, 0)},
		{name: "bare integer overflow", in: "9223372036854775808", err: "invalid label: remaining tokens 9223372036854775808 out of range"},
		{name: "negative bare integer", in: "-5", err: `invalid label: want a JSON object, "impossible" or a non-negative integer, got "-5"`},
		{name: "empty", in: "  ", err: `invalid label: want a JSON object, "impossible" or a non-negative integer, got ""`},
		{name: "interval text", in: "[1, 2]", err: `invalid label: want a JSON object, "impossible" or a non-negative integer, got "[1, 2]"`},
		{name: "long garbage clipped", in: "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", err: `invalid label: want a JSON object, "impossible" or a non-negative integer, got "abcdefghijklmnopqrstuvwxyzabcdefghijklmn…"`},
		{name: "missing is_possible", in: `{"remaining_tokens":5}`, err: "invalid label: is_possible: missing"},
		{name: "null is_possible", in: `{"remaining_tokens":5,"is_possible":null}`, err: "invalid label: is_possible: missing"},
		{name: "missing remaining", in: `{"is_possible":true}`, err: "invalid label: remaining_tokens: missing"},
		{name: "fractional remaining", in: `{"remaining_tokens":12.5,"is_possible":true}`, err: "invalid label: remaining_tokens: offset 20: want an integer, got 12.5"},
		{name: "negative remaining", in: `{"remaining_tokens":-1,"is_possible":true}`, err: "invalid label: remaining_tokens: want a non-negative integer, got -1"},
		{name: "string remaining", in: `{"remaining_tokens":"5","is_possible":true}`, err: "invalid label: remaining_tokens: offset 20: want number, got string"},
		{name: "string is_possible", in: `{"remaining_tokens":5,"is_possible":"true"}`, err: "invalid label: is_possible: offset 36: want boolean, got string"},
		{name: "warehouse missing a dim", in: `{"is_possible":true,"time_weeks":2,"cumulative_cost_usd":3}`, err: "invalid label: warehouse_item_weeks: missing"},
		{name: "warehouse negative", in: `{"is_possible":true,"time_weeks":-2}`, err: "invalid label: time_weeks: want a non-negative number, got -2"},
		{name: "broken json", in: `{"remaining_tokens":5,`, err: "invalid label: offset 22: want string, got end of input"},
		{name: "trailing data", in: `{"is_possible":false} x`, err: "invalid label: offset 22: unexpected data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ParseTarget(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				if !errors.Is(err, ErrLabel) {
					t.Errorf("ParseTarget(%q) error %v does not wrap ErrLabel", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseLabel(t *testing.T) {
	got, err := ParseLabel(`{"remaining_tokens":450,"is_possible":true,"ground_truth":"[405, 495]"}`)
	if want := (Truth{Remaining: 450, Possible: true}); err != nil || got != want {
		t.Errorf("ParseLabel(build label) = %+v, %v; want %+v", got, err, want)
	}
	_, err = ParseLabel(`{"is_possible":true,"time_weeks":1,"warehouse_item_weeks":2,"cumulative_cost_usd":3}`)
	if want := "invalid label: holds warehouse dimensions, want remaining_tokens"; err == nil || err.Error() != want || !errors.Is(err, ErrLabel) {
		t.Errorf("ParseLabel(warehouse label) error = %v, want %q", err, want)
	}
	_, err = ParseLabel("x")
	if !errors.Is(err, ErrLabel) {
		t.Errorf("ParseLabel(x) error = %v, want ErrLabel", err)
	}
}

func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{
		`{"remaining_tokens":450,"is_possible":true,"ground_truth":"[405, 495]"}`,
		`{"is_possible":true,"time_weeks":2,"warehouse_item_weeks":12.5,"cumulative_cost_usd":1500.25}`,
		"impossible", "1234", `{"is_possible":null}`, `{"a":[{"b":"\u00e9"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		tgt, err := ParseTarget(label)
		if err != nil {
			if !errors.Is(err, ErrLabel) {
				t.Fatalf("ParseTarget(%q) error %v does not wrap ErrLabel", label, err)
			}
			return
		}
		if tr, ok := tgt.Tokens(); ok && tr.Remaining < 0 {
			t.Fatalf("ParseTarget(%q) = %+v: negative remaining", label, tgt)
		}
		wt, _ := tgt.Resources()
		for _, v := range wt.Remaining {
			if v < 0 {
				t.Fatalf("ParseTarget(%q) = %+v: negative dimension", label, tgt)
			}
		}
	})
}
