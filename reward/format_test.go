package reward

import "testing"

func TestTextRoundTrip(t *testing.T) {
	tests := []struct {
		p    Prediction
		want string
	}{
		{Prediction{Kind: Impossible}, "impossible"},
		{Prediction{Kind: Interval, Low: 62, High: 117}, "[62, 117]"},
		{Prediction{Kind: Interval, Low: 9, High: 3}, "[9, 3]"},
		{Prediction{Kind: Scalar, Low: 321, High: 321}, "321"},
		{Prediction{}, ""},
	}
	for _, tt := range tests {
		got := tt.p.Text()
		if got != tt.want {
			t.Errorf("%+v.Text() = %q, want %q", tt.p, got, tt.want)
		}
		if tag := Tag(got); tag != "<answer>"+tt.want+"</answer>" {
			t.Errorf("Tag(%q) = %q", got, tag)
		}
		if tt.p.Kind != Unparseable {
			if back := Parse(Tag(got)); back != tt.p {
				t.Errorf("Parse(Tag(%q)) = %+v, want %+v", got, back, tt.p)
			}
		}
	}
}
