// Package steps reads a lecture's walk-through, steps.txt: the one
// description that `make tour L=NN` runs, that the lecture's README shows in
// the same order (its tests check it), and that `make reset-lecture L=NN`
// takes the lecture's topics, groups and users from.
//
//	# comments
//	topics: brew.orders.v1 brew.promo.*     (names or prefixes* to delete on reset)
//	groups: brew.promo.*
//	users: partner analytics                (SCRAM users whose ACLs, quotas and passwords reset deletes)
//	files: .state                           (folders of the lecture's own, its local stores, that reset deletes)
//
//	== Who leads the cluster                (a step: its title,)
//	make run                                (the command, a target of the lecture's Makefile,)
//	stop: 10s                               (optional: a live view; the tour presses Ctrl-C after 10s)
//	needs: real Kafka                       (optional: the step needs real Kafka, not the embedded simulation)
//	The program asks DescribeQuorum ...     (and what to look at, any number of lines)
package steps

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// File is the name of the walk-through in a lecture's folder.
const File = "steps.txt"

// Lecture is one lecture's walk-through.
type Lecture struct {
	Topics []string // names, or prefixes ending in *
	Groups []string
	Users  []string // names, or prefixes ending in *
	Files  []string // paths inside the lecture's folder
	Steps  []Step
}

// Step is one step of the walk-through.
type Step struct {
	Title   string
	Command string        // as typed: make TARGET [VAR=value ...]
	Target  string        // the Makefile target
	Vars    []string      // VAR=value arguments
	Stop    time.Duration // a live view that runs until Ctrl-C: stop it after this long
	Real    bool          // needs real Kafka (Kafka's tools, real replication): skipped on the simulation
	Text    string        // what to look at, one paragraph
	Line    int
}

// Read parses the walk-through at file.
func Read(file string) (Lecture, error) {
	f, err := os.Open(file)
	if err != nil {
		return Lecture{}, err
	}
	defer f.Close()
	var l Lecture
	var cur *Step
	sc := bufio.NewScanner(f)
	n := 0
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", file, n, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " \t")
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			l.Steps = append(l.Steps, Step{Title: strings.TrimSpace(line[3:]), Line: n})
			cur = &l.Steps[len(l.Steps)-1]
		case cur == nil && strings.HasPrefix(line, "topics:"):
			l.Topics = strings.Fields(strings.TrimPrefix(line, "topics:"))
		case cur == nil && strings.HasPrefix(line, "groups:"):
			l.Groups = strings.Fields(strings.TrimPrefix(line, "groups:"))
		case cur == nil && strings.HasPrefix(line, "users:"):
			l.Users = strings.Fields(strings.TrimPrefix(line, "users:"))
		case cur == nil && strings.HasPrefix(line, "files:"):
			l.Files = strings.Fields(strings.TrimPrefix(line, "files:"))
			for _, f := range l.Files {
				if path.IsAbs(f) || !filepath.IsLocal(f) {
					return l, fail("files: %q is not a path inside the lecture's folder", f)
				}
			}
		case cur == nil && line == "":
		case cur == nil:
			return l, fail("%q outside a step (a step starts with \"== title\")", line)
		case cur.Command == "":
			f, ok := splitArgs(line)
			if !ok || len(f) < 2 || f[0] != "make" {
				return l, fail("step %q: the line after the title must be its command, `make TARGET [VAR=value]`, not %q", cur.Title, line)
			}
			cur.Command, cur.Target = line, f[1]
			for _, v := range f[2:] {
				if !strings.Contains(v, "=") {
					return l, fail("step %q: %q is not VAR=value", cur.Title, v)
				}
				cur.Vars = append(cur.Vars, v)
			}
		case cur.Text == "" && line == "needs: real Kafka":
			cur.Real = true
		case cur.Text == "" && strings.HasPrefix(line, "stop:"):
			d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(line, "stop:")))
			if err != nil || d <= 0 {
				return l, fail("step %q: stop: wants a duration such as 10s", cur.Title)
			}
			cur.Stop = d
		case line == "":
			if cur.Text != "" && !strings.HasSuffix(cur.Text, "\n\n") {
				cur.Text += "\n"
			}
		default:
			cur.Text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		return l, err
	}
	if len(l.Steps) == 0 {
		return l, fmt.Errorf("%s: no steps", file)
	}
	for _, s := range l.Steps {
		if s.Command == "" || strings.TrimSpace(s.Text) == "" {
			return l, fmt.Errorf("%s:%d: step %q needs a command and a text", file, s.Line, s.Title)
		}
	}
	for i := range l.Steps {
		l.Steps[i].Text = strings.TrimSpace(l.Steps[i].Text)
	}
	return l, nil
}

// Matches reports whether name is one of patterns (a name, or a prefix
// ending in *).
func Matches(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok && !strings.Contains(p, "/") {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// splitArgs splits a command line as a shell would, for the little our
// commands use: words, and double quotes around a value with spaces.
func splitArgs(line string) ([]string, bool) {
	var args []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	return args, !quoted
}

// Markdown is the README's list of the steps (between the markers
// <!-- steps: ... --> and <!-- /steps -->): numbered commands, with the
// step titles when titled (the Russian README; steps.txt is in Russian).
func Markdown(l Lecture, titled bool) string {
	var b strings.Builder
	for i, s := range l.Steps {
		if titled {
			fmt.Fprintf(&b, "%d. %s: `%s`\n", i+1, s.Title, s.Command)
		} else {
			fmt.Fprintf(&b, "%d. `%s`\n", i+1, s.Command)
		}
	}
	return b.String()
}
