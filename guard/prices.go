package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"bagen-data/rollout"
)

// Prices are the dollar prices of the models a guard relays, read from a
// prices file (ParsePrices): one line per model name or glob,
//
//	# model          input  cached_input  output   ($ per million tokens)
//	claude-sonnet-4* 3      0.30          15
//	gpt-5*           1.25   0.125         10
//
// fields separated by blanks, # starting a comment, the first line whose
// glob (path.Match) matches a call's model pricing it. The guard fetches
// nothing: the prices are the user's. Safe for concurrent use (read only).
type Prices struct {
	rows []PriceRow
}

// PriceRow is one line of a prices file: dollars per million tokens of
// uncached input, cached input (read from a prompt cache) and output
// (reasoning included).
type PriceRow struct {
	Model                 string
	Input, Cached, Output float64
}

// PricesError is a bad line of a prices file: the file, the 1-based
// line and the field.
type PricesError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *PricesError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *PricesError) Unwrap() error { return e.Err }

// maxPrice bounds a price: $1M per million tokens is a typo.
const maxPrice = 1e6

// LoadPrices reads a prices file.
func LoadPrices(file string) (*Prices, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	return ParsePrices(file, data)
}

// ParsePrices reads a prices file's bytes; file names it in errors. A
// file with no price line is an error.
func ParsePrices(file string, data []byte) (*Prices, error) {
	p := &Prices{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		row, err := priceRow(fields)
		if err != nil {
			err.File, err.Line = file, line
			return nil, err
		}
		p.rows = append(p.rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, &PricesError{File: file, Line: line + 1, Err: err}
	}
	if len(p.rows) == 0 {
		return nil, &PricesError{File: file, Line: line, Err: errors.New("no price line (want: MODEL INPUT CACHED_INPUT OUTPUT, $ per million tokens)")}
	}
	return p, nil
}

// priceFields name the columns of a price line.
var priceFields = [...]string{"model", "input", "cached_input", "output"}

func priceRow(fields []string) (PriceRow, *PricesError) {
	if len(fields) != len(priceFields) {
		return PriceRow{}, &PricesError{Err: fmt.Errorf("want 4 fields (model input cached_input output), got %d", len(fields))}
	}
	row := PriceRow{Model: fields[0]}
	if _, err := path.Match(row.Model, ""); err != nil {
		return PriceRow{}, &PricesError{Field: "model", Err: fmt.Errorf("glob %q: %w", row.Model, err)}
	}
	for i, dst := range []*float64{&row.Input, &row.Cached, &row.Output} {
		v, err := strconv.ParseFloat(fields[i+1], 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > maxPrice {
			return PriceRow{}, &PricesError{Field: priceFields[i+1], Err: fmt.Errorf("want dollars per million tokens in [0, %g], got %q", maxPrice, fields[i+1])}
		}
		*dst = v
	}
	return row, nil
}

// Rows are the price lines, in file order.
func (p *Prices) Rows() []PriceRow { return append([]PriceRow(nil), p.rows...) }

// Lookup is the price line of model: the first whose glob matches it.
func (p *Prices) Lookup(model string) (PriceRow, bool) {
	if p == nil {
		return PriceRow{}, false
	}
	for _, r := range p.rows {
		if ok, _ := path.Match(r.Model, model); ok {
			return r, true
		}
	}
	return PriceRow{}, false
}

// Cost is the dollars of one call of model with usage u:
//
//	((input − cached)·Input + cached·Cached + output·Output) / 10⁶
//
// ok is false when no line prices model or u lacks a count (an
// unrecorded input or output): the call is then not priced.
func (p *Prices) Cost(model string, u *rollout.GuardUsage) (usd float64, ok bool) {
	r, found := p.Lookup(model)
	if !found || u == nil || u.Input < 0 || u.Output < 0 {
		return 0, false
	}
	cached := min(max(u.Cached, 0), u.Input)
	return (float64(u.Input-cached)*r.Input + float64(cached)*r.Cached + float64(u.Output)*r.Output) / 1e6, true
}

// PerToken is model's uncached input price in dollars per token, the
// price of a forecast made before any call is priced.
func (p *Prices) PerToken(model string) (float64, bool) {
	r, ok := p.Lookup(model)
	return r.Input / 1e6, ok
}
