// Package tour walks an audience through a lecture's steps (steps.txt): each
// step's title, explanation and command, then the command run, then a pause
// for Enter, or a timed pause in auto mode.
package tour

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/steps"
)

// Options set up a tour.
type Options struct {
	Title     string        // "Lecture 01", for the header
	Simulated bool          // the cluster is the embedded simulation: steps that need real Kafka are skipped
	Auto      bool          // go on by itself after Pause
	Pause     time.Duration // auto mode: the pause after each step
	In        io.Reader     // Enter (or q) between steps
	Out       io.Writer
	// Run runs one step's command and returns when it ends; a step with Stop
	// set must be interrupted (Ctrl-C) after that long.
	Run func(ctx context.Context, s steps.Step) error
}

// ErrQuit is returned when the audience typed q.
var ErrQuit = errors.New("tour stopped")

// Run walks through l's steps in order. A step that fails stops the tour
// with its error.
func Run(ctx context.Context, l steps.Lecture, o Options) error {
	in := bufio.NewReader(o.In)
	for i, s := range l.Steps {
		fmt.Fprintf(o.Out, "\n=== %s, step %d of %d: %s\n\n%s\n\n$ %s\n", o.Title, i+1, len(l.Steps), s.Title, s.Text, s.Command)
		if s.Stop > 0 {
			fmt.Fprintf(o.Out, "(a live view: Ctrl-C after %s)\n", s.Stop)
		}
		start := time.Now()
		if s.Real && o.Simulated {
			fmt.Fprintln(o.Out, "(skipped: this step needs real Kafka, and the cluster is the embedded simulation; `make down && make up STAND=native` or STAND=docker)")
		} else if err := o.Run(ctx, s); err != nil {
			return fmt.Errorf("step %d (%s) failed after %s: %w", i+1, s.Command, time.Since(start).Round(100*time.Millisecond), err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if i == len(l.Steps)-1 {
			break
		}
		if o.Auto {
			fmt.Fprintf(o.Out, "\n--- next step in %s\n", o.Pause)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(o.Pause):
			}
			continue
		}
		fmt.Fprint(o.Out, "\n--- Enter: next step, q: quit ")
		line, err := in.ReadString('\n')
		if strings.TrimSpace(line) == "q" || (err != nil && line == "") {
			return ErrQuit
		}
	}
	fmt.Fprintf(o.Out, "\n=== %s: all %d steps done. `make reset-lecture` clears what they left, to run them again.\n", o.Title, len(l.Steps))
	return nil
}
