package dashboard

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// styles colour the view on a terminal; plain ones draw the same text.
type styles struct {
	title, bad, warn, good, dim lipgloss.Style
}

func newStyles(color bool) styles {
	if !color {
		p := lipgloss.NewStyle()
		return styles{p, p, p, p, p}
	}
	return styles{
		title: lipgloss.NewStyle().Bold(true),
		bad:   lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		warn:  lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		good:  lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		dim:   lipgloss.NewStyle().Faint(true),
	}
}

// Render draws the snapshot in width x height cells (0: no limit). Rows that
// do not fit are summed up in a last line; long lines are cut. color false
// draws plain text, for a pipe and for the tests' golden file.
func Render(s Snapshot, width, height int, color bool) string {
	st := newStyles(color)
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	where := "KAFKA_BOOTSTRAP"
	if s.Stand != "" {
		where = string(s.Stand) + " stand"
	}
	add("%s  %s  %s", st.title.Render("Brew cluster"), where, s.At.Format("15:04:05"))
	add("produce %s rec/s   consume %s rec/s (committed by groups)", rate(s.Produce), rate(s.Consume))
	if s.Image != "" {
		add("image %s", s.Image)
	}

	var nodes []string
	for _, n := range s.Nodes {
		cell := fmt.Sprintf("%d %s", n.ID, n.State)
		switch {
		case n.State == "stopped":
			cell = st.bad.Render(fmt.Sprintf("%d STOPPED", n.ID))
		case n.State == "paused":
			cell = st.warn.Render(fmt.Sprintf("%d PAUSED", n.ID))
		case !n.Registered:
			cell = st.warn.Render(fmt.Sprintf("%d %s, not registered", n.ID, n.State))
		default:
			cell = st.good.Render(cell)
		}
		if n.ID == s.Leader {
			cell += " (Raft leader)"
		}
		nodes = append(nodes, cell)
	}
	leader := "none"
	if s.Leader >= 0 {
		leader = fmt.Sprint(s.Leader)
	}
	add("nodes   %s", strings.Join(nodes, "   "))
	add("quorum  leader %s, voters %s   (! under-replicated)", leader, ids(s.Voters))
	if s.Alerts != nil {
		add("%s", alertsLine(s, st))
	}
	add("")

	// Topics, then groups; what does not fit is counted at the end.
	var body []string
	// "!" marks an under-replicated partition (or one without a leader), in
	// red on a terminal, so it shows without colour too.
	body = append(body, st.title.Render(fmt.Sprintf("  %-28s %4s %6s %-9s %-9s %9s", "TOPIC", "P", "LEADER", "REPLICAS", "ISR", "END")))
	for _, t := range s.Topics {
		if strings.HasPrefix(t.Name, "__") {
			continue
		}
		for i, p := range t.Partitions {
			name := ""
			if i == 0 {
				name = t.Name
			}
			leaderCell := fmt.Sprint(p.Leader)
			if p.Leader < 0 {
				leaderCell = "none"
			}
			mark := " "
			if p.UnderReplicated() || p.Leader < 0 {
				mark = "!"
			}
			row := fmt.Sprintf("%s %-28s %4d %6s %-9s %-9s %9d", mark, cut(name, 28), p.ID, leaderCell, ids(p.Replicas), ids(p.ISR), p.End)
			if mark == "!" {
				row = st.bad.Render(row)
			}
			body = append(body, row)
		}
	}
	body = append(body, "")
	body = append(body, st.title.Render(fmt.Sprintf("  %-28s %-8s %-12s %7s %9s", "GROUP", "KIND", "STATE", "MEMBERS", "LAG")))
	if len(s.Groups) == 0 {
		body = append(body, st.dim.Render("(no groups)"))
	}
	for _, g := range s.Groups {
		lag := "?"
		if g.Lag >= 0 {
			lag = fmt.Sprint(g.Lag)
		}
		body = append(body, fmt.Sprintf("  %-28s %-8s %-12s %7d %9s", cut(g.Name, 28), g.Kind, g.State, g.Members, lag))
	}

	footer := []string{}
	if s.Err != "" {
		footer = append(footer, st.warn.Render("not read this time: "+s.Err))
	}
	if height > 0 {
		room := height - len(lines) - len(footer)
		if room < 1 {
			room = 1
		}
		if len(body) > room {
			hidden := len(body) - (room - 1)
			body = append(body[:room-1], st.dim.Render(fmt.Sprintf("... %d more lines: enlarge the terminal", hidden)))
		}
	}
	lines = append(lines, body...)
	lines = append(lines, footer...)
	if width > 0 {
		for i, l := range lines {
			if lipgloss.Width(l) > width {
				lines[i] = cutStyled(l, width)
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func rate(r float64) string {
	if r >= 1000 {
		return fmt.Sprintf("%.1fk", r/1000)
	}
	return fmt.Sprintf("%.0f", r)
}

func cut(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// cutStyled shortens a line that may hold colour codes to width cells.
func cutStyled(l string, width int) string {
	return lipgloss.NewStyle().MaxWidth(width).Render(l)
}
