// Package notes is what lecture 10's programs say on stderr beside their
// result: a note on what a run did for itself (it started a partner of its
// own) and progress lines.
//
// On a terminal each is printed as it comes. Piped (make's output in CI, a
// script, the fault matrix) progress is left out and a note waits for the
// run's success (Done), so that a run that fails, say because Kafka does not
// answer, says one line: its failure.
package notes

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Notes writes a program's notes to a writer. The zero value writes nothing.
type Notes struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	held []string
}

// Stderr is the notes of a program on os.Stderr.
func Stderr() *Notes { return To(os.Stderr, brewkit.IsTerminal(os.Stderr)) }

// To is the notes written to w, a terminal or not.
func To(w io.Writer, tty bool) *Notes { return &Notes{w: w, tty: tty} }

// Note prints line now on a terminal; piped, it holds it until Done.
func (n *Notes) Note(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tty {
		fmt.Fprintln(n.w, line)
		return
	}
	n.held = append(n.held, line)
}

// Progress prints line on a terminal, and only there.
func (n *Notes) Progress(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tty {
		fmt.Fprintln(n.w, line)
	}
}

// Done says the run succeeded: the notes held until now are printed.
func (n *Notes) Done() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.held {
		fmt.Fprintln(n.w, l)
	}
	n.held = nil
}
