package guard

import (
	"fmt"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// forecast is s's forecast for the whole session after turn k (0: at its
// start), when it had spent spent tokens and usd dollars, from an
// estimate's interval of the remaining tokens: spent + interval, in
// dollars too with prices (GuardForecast says how). It is
// kept as the session's latest, counted and logged. Called with s.mu
// held.
func (g *Guard) forecast(s *Session, k int, spent int64, usd float64, iv [2]int64) rollout.GuardForecast {
	f := rollout.GuardForecast{Event: "forecast", Session: s.ID, Time: g.stamp(), AfterTurn: k, Spent: spent,
		Low: spent + iv[0], High: spent + iv[1], Budget: g.budget, BudgetUSD: g.cfg.BudgetUSD}
	if rate, ok := g.usdPerToken(s.pol.model, spent, usd); ok {
		f.USDSpent = usd
		f.USDLow = usd + float64(iv[0])*rate
		f.USDHigh = usd + float64(iv[1])*rate
	}
	s.pol.forecast = &f
	g.metrics.forecast(f)
	g.logf("session %s: forecast after turn %d: %s", s.ID, k, forecastRange(&f))
	return f
}

// usdPerToken is the price of a session's remaining tokens: its dollars
// per token so far, or, before any priced call, its model's input price.
func (g *Guard) usdPerToken(model string, spent int64, usd float64) (float64, bool) {
	if g.cfg.Prices == nil {
		return 0, false
	}
	if usd > 0 && spent > 0 {
		return usd / float64(spent), true
	}
	return g.cfg.Prices.PerToken(model)
}

// forecastRange is a forecast in words: "12000 to 30000 tokens
// ($0.0400 to $0.1000)".
func forecastRange(f *rollout.GuardForecast) string {
	text := fmt.Sprintf("%d to %d tokens", f.Low, f.High)
	if f.USDHigh > 0 {
		text += fmt.Sprintf(" ($%.4f to $%.4f)", f.USDLow, f.USDHigh)
	}
	return text
}

// forecastText is the forecast sentence a note carries; "" without one.
func forecastText(f *rollout.GuardForecast) string {
	if f == nil {
		return ""
	}
	return " Forecast for the whole session: " + forecastRange(f) + "."
}

// startPrompt is the probe before the first turn of a session whose
// first request is items: the task's system prompt and the request's
// user message with the estimation prompt, as `probes` renders a probe
// after turn 0. ok is false when the request already has turns (a
// session the guard joins midway).
func startPrompt(task probes.Task, items []rollout.Message, budget int64) ([]rollout.Message, bool) {
	system, turns, tail := rollout.SplitGuardHistory(items)
	if len(turns) > 0 {
		return nil, false
	}
	var t rollout.Trajectory
	if system != "" {
		t.Messages = append(t.Messages, rollout.Message{Role: "system", Content: system, Tokens: rollout.Unrecorded})
	}
	t.Messages = append(t.Messages, rollout.Message{Role: "user", Content: rollout.JoinGuardItems(tail), Tokens: rollout.Unrecorded})
	a := probes.Accounting{Pairs: [][2]int{{len(t.Messages) - 1, -1}}, TrailingAt: -1}
	return task.Render(t, a, probes.Probe{After: 0}, budget, true), true
}

// startForecast asks for s's forecast before its first turn, when the
// estimator can answer one (Config.ForecastStart); it runs beside the
// session's first call and never holds it.
func (g *Guard) startForecast(s *Session, items []rollout.Message) {
	if !g.cfg.ForecastStart || g.est == nil || g.budget <= 0 {
		return
	}
	prompt, ok := startPrompt(g.task, items, g.budget)
	if !ok {
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.estimate(s, 0, prompt, 0, 0, make(chan struct{}))
	}()
}
