package baseline

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"bagen-data/fixtures/sokoban"
)

// The Sokoban features read the room RAGEN's observations show (# wall,
// _ floor, O target, X box, √ box on target, P player, S player on
// target) and play the last answer's moves on it: the probe after turn k
// shows the answer of turn k but not the room it led to.
var sokobanGroup = &group{
	name: "sokoban",
	task: "sokoban",
	features: []Feature{
		{"sk_boxes_off", "sokoban", "boxes not on a target, after the last answer's moves"},
		{"sk_on_share", "sokoban", "share of boxes on targets"},
		{"sk_dist", "sokoban", "sum over boxes off target of the distance to the nearest free target"},
		{"sk_player_dist", "sokoban", "distance from the player to the nearest box off target"},
		{"sk_cornered", "sokoban", "boxes off target in a corner of walls (the room is unsolvable)"},
		{"sk_turns_left", "sokoban", "turns left after the last answer"},
		{"sk_need_ratio", "sokoban", "box distance / moves the turns left allow"},
		{"sk_infeasible", "sokoban", "1 when a box is cornered or the distance exceeds the moves left"},
		{"sk_stalled", "sokoban", "turns since a box last moved (at most 12)"},
		{"sk_dist_delta", "sokoban", "box distance now minus three turns before"},
		{"sk_blocked_last", "sokoban", "share of the last answer's moves that hit a wall or an immovable box"},
		{"sk_unparsed", "sokoban", "1 when the room could not be read"},
		{"sk_need", "sokoban", "box distance plus the player's distance to the nearest box: moves still needed, at least"},
		{"sk_rate", "sokoban", "moves needed removed per move played since the first observation"},
		{"sk_log_token_need", "sokoban", "log(1 + tokens the needed moves cost at the run's own rate and tokens per turn / budget left)"},
	},
	fill: fillSokoban,
}

// parseRoom reads the grid after "State:" in an observation with the
// fixtures' own Sokoban rules.
func parseRoom(obs string) (*sokoban.Room, bool) {
	i := strings.LastIndex(obs, "State:\n")
	if i < 0 {
		return nil, false
	}
	var grid strings.Builder
	for line := range strings.Lines(obs[i+len("State:\n"):]) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || strings.Trim(line, "#_OX√PS") != "" {
			break
		}
		grid.WriteString(line + "\n")
	}
	if grid.Len() == 0 {
		return nil, false
	}
	r, err := sokoban.Parse(grid.String())
	return r, err == nil
}

// play applies the moves of an answer ("Up || Left") and returns how many
// were played, how many were blocked and whether a box moved.
func play(r *sokoban.Room, answer string) (played, blocked int, pushed bool) {
	for _, m := range strings.Split(answerOf(answer), "||") {
		a, err := sokoban.ParseAction(m)
		if err != nil {
			continue
		}
		played++
		out := r.Step(a)
		if !out.Moved {
			blocked++
		}
		pushed = pushed || out.Pushed
	}
	return played, blocked, pushed
}

// measure returns the boxes off target, their summed distance to the
// nearest free target, the player's distance to the nearest of them and how
// many sit in a corner of walls.
func measure(r *sokoban.Room) (off, dist, player, cornered int) {
	player = math.MaxInt
	targets := r.Targets()
	for _, b := range r.Boxes() {
		if r.Target(b) {
			continue
		}
		off++
		best := math.MaxInt
		for _, t := range targets {
			if !r.Box(t) {
				best = min(best, manhattan(b, t))
			}
		}
		if best != math.MaxInt {
			dist += best
		}
		player = min(player, manhattan(r.Player(), b))
		vert := r.Wall(sokoban.Pos{Row: b.Row - 1, Col: b.Col}) || r.Wall(sokoban.Pos{Row: b.Row + 1, Col: b.Col})
		horiz := r.Wall(sokoban.Pos{Row: b.Row, Col: b.Col - 1}) || r.Wall(sokoban.Pos{Row: b.Row, Col: b.Col + 1})
		if vert && horiz {
			cornered++
		}
	}
	if off == 0 {
		player = 0
	}
	return off, dist, player, cornered
}

func manhattan(a, b sokoban.Pos) int { return abs(a.Row-b.Row) + abs(a.Col-b.Col) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

var (
	turnsLeftRe  = regexp.MustCompile(`Turn \d+ \((\d+) left\)`)
	maxActionsRe = regexp.MustCompile(`at most (\d+) actions? per turn`)
	maxTurnsRe   = regexp.MustCompile(`You have (\d+) turns`)
)

func fillSokoban(v *View, out []float64) {
	k := len(v.Observations)
	if k == 0 {
		out[11] = 1
		return
	}
	r, ok := parseRoom(v.Observations[k-1])
	if !ok {
		out[11] = 1
		return
	}
	played, blocked, moved := 0, 0, false
	if len(v.Answers) >= k {
		played, blocked, moved = play(r, v.Answers[k-1])
	}
	off, dist, player, cornered := measure(r)
	boxes := r.NumBoxes()
	left := sokobanTurnsLeft(v)
	perTurn := 3
	if m := maxActionsRe.FindStringSubmatch(v.Observations[0]); m != nil {
		perTurn, _ = strconv.Atoi(m[1])
	}
	out[0] = float64(off)
	out[1] = float64(boxes-off) / float64(boxes)
	out[2] = float64(dist)
	out[3] = float64(player)
	out[4] = float64(cornered)
	out[5] = float64(left)
	out[6] = float64(dist) / float64(perTurn*max(left, 0)+1)
	out[7] = b2f(cornered > 0 || dist > perTurn*max(left, 0))
	out[8] = float64(sokobanStalled(v, moved))
	if k >= 3 {
		if old, ok := parseRoom(v.Observations[k-3]); ok {
			_, d, _, _ := measure(old)
			out[9] = float64(dist - d)
		}
	}
	if played > 0 {
		out[10] = float64(blocked) / float64(played)
	}
	need := dist + player
	out[12] = float64(need)
	rate := 1.0
	if first, ok := parseRoom(v.Observations[0]); ok && len(v.Answers) > 0 {
		_, d0, p0, _ := measure(first)
		rate = float64(d0+p0-need) / float64(perTurn*len(v.Answers))
	}
	out[13] = rate
	used := float64(v.Used())
	budgetLeft := max(float64(v.Stated.Budget)-used, 1)
	perTurnTokens := used / float64(max(len(v.Answers), 1))
	turnsNeeded := float64(need) / max(rate, 0.1) / float64(perTurn)
	out[14] = math.Log1p(min(turnsNeeded*perTurnTokens/budgetLeft, 100))
}

// sokobanTurnsLeft is the turns left after the last answer: the last
// observation's "(L left)" counts the turn it asks for.
func sokobanTurnsLeft(v *View) int {
	k := len(v.Observations)
	if m := turnsLeftRe.FindStringSubmatch(v.Observations[k-1]); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n - (len(v.Answers) - (k - 1))
	}
	if m := maxTurnsRe.FindStringSubmatch(v.Observations[0]); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n - len(v.Answers)
	}
	return 0
}

// sokobanStalled counts the turns, newest first, after which the boxes
// stood where they stand now: 0 when the last answer moved one, else one
// more than the observations whose "Boxes:" line repeats the one before,
// at most recent.
func sokobanStalled(v *View, moved bool) int {
	if moved {
		return 0
	}
	n := 1
	for i := len(v.Observations) - 1; i >= 1 && n < recent; i-- {
		a, b := boxesLine(v.Observations[i]), boxesLine(v.Observations[i-1])
		if a == "" || a != b {
			break
		}
		n++
	}
	return n
}

// boxesLine is an observation's "Boxes: …" line, "" without one.
func boxesLine(obs string) string {
	i := strings.LastIndex(obs, "\nBoxes: ")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(obs[i+1:], "\n")
	return line
}
