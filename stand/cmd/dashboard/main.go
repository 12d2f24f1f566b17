// Command dashboard is `make dashboard`: a live view of the course cluster
// for the projector, redrawn every second. Piped, it prints plain snapshots
// instead; -once prints one and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
	"github.com/brew-course/kafka/stand/dashboard"
)

func main() {
	once := flag.Bool("once", false, "print one plain snapshot and exit")
	plain := flag.Bool("plain", false, "plain snapshots, one after another, even on a terminal")
	every := flag.Duration("every", time.Second, "time between refreshes")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: dashboard [-once] [-plain] [-every 1s]\n\nA live view of the cluster on KAFKA_BOOTSTRAP (default: the course stand); q or Ctrl-C quits.")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*every >= 200*time.Millisecond, "every", *every, "at least 200ms")
	fc.NoArgs()
	fc.ExitOnUsageError("dashboard")

	brewkit.Main("dashboard", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, *once, *plain || !isTerminal(), *every)
	})
}

func run(ctx context.Context, cfg brewkit.Config, once, plain bool, every time.Duration) error {
	dctx, cancel := context.WithTimeout(ctx, brewkit.DialTimeout)
	cl, _, err := brewkit.Connect(dctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer cl.Close()
	s, err := stand.Find()
	if err != nil {
		s = nil // a cluster of its own on KAFKA_BOOTSTRAP: no node processes to show
	}
	if once || plain {
		var prev *dashboard.Snapshot
		for {
			snap := dashboard.Collect(ctx, s, cl, prev)
			fmt.Print(dashboard.Render(snap, 0, 0, false))
			if once {
				if snap.Err != "" {
					// A script reads the one snapshot: an incomplete
					// one is a failure, not a cluster with nothing in it.
					return fmt.Errorf("the snapshot above is incomplete: %s", snap.Err)
				}
				return nil
			}
			fmt.Println("----")
			prev = &snap
			if err := brewkit.Sleep(ctx, every); err != nil {
				return err // Ctrl-C: brewkit.Main says so
			}
		}
	}
	m := &model{ctx: ctx, s: s, cl: cl, every: every}
	_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err() // SIGTERM from outside
	}
	return err
}

func isTerminal() bool {
	fi, err := os.Stdout.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// model is the bubbletea model: the last snapshot and the window's size.
type model struct {
	ctx           context.Context
	s             *stand.Stand
	cl            *kgo.Client
	every         time.Duration
	snap          *dashboard.Snapshot
	width, height int
}

type snapMsg dashboard.Snapshot
type tickMsg struct{}

func (m *model) collect() tea.Msg {
	return snapMsg(dashboard.Collect(m.ctx, m.s, m.cl, m.snap))
}

func (m *model) Init() tea.Cmd { return m.collect }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		}
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case snapMsg:
		snap := dashboard.Snapshot(msg)
		m.snap = &snap
		return m, tea.Tick(m.every, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.collect
	}
	return m, nil
}

func (m *model) View() string {
	if m.snap == nil {
		return "reading the cluster...\n"
	}
	// No newline after the last line: on a full screen it would scroll the
	// first line away.
	return strings.TrimSuffix(dashboard.Render(*m.snap, m.width, m.height, true), "\n")
}
