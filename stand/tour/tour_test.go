package tour

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/steps"
)

func lecture() steps.Lecture {
	return steps.Lecture{Steps: []steps.Step{
		{Title: "One", Command: "make run", Target: "run", Text: "first"},
		{Title: "Two", Command: "make watch", Target: "watch", Stop: time.Second, Text: "live"},
		{Title: "Three", Command: "make grow", Target: "grow", Text: "last"},
	}}
}

func TestRunsEveryStepInOrderWithEnterBetween(t *testing.T) {
	var ran []string
	var out bytes.Buffer
	err := Run(context.Background(), lecture(), Options{
		Title: "Lecture 99", In: strings.NewReader("\n\n"), Out: &out,
		Run: func(_ context.Context, s steps.Step) error { ran = append(ran, s.Target); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ran, " ") != "run watch grow" {
		t.Fatalf("ran %v", ran)
	}
	for _, want := range []string{"step 1 of 3: One", "$ make run", "(a live view: Ctrl-C after 1s)", "Enter: next step", "all 3 steps done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestQuitAndFailure(t *testing.T) {
	var ran int
	run := func(context.Context, steps.Step) error { ran++; return nil }
	err := Run(context.Background(), lecture(), Options{In: strings.NewReader("q\n"), Out: &bytes.Buffer{}, Run: run})
	if !errors.Is(err, ErrQuit) || ran != 1 {
		t.Fatalf("q: err %v after %d steps", err, ran)
	}
	boom := errors.New("exit status 2")
	err = Run(context.Background(), lecture(), Options{Auto: true, Out: &bytes.Buffer{},
		Run: func(_ context.Context, s steps.Step) error {
			if s.Target == "watch" {
				return boom
			}
			return nil
		}})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "step 2 (make watch)") {
		t.Fatalf("failure: %v", err)
	}
}

func TestRealStepsAreSkippedOnTheSimulation(t *testing.T) {
	l := lecture()
	l.Steps[1].Real = true
	var ran []string
	var out bytes.Buffer
	err := Run(context.Background(), l, Options{Auto: true, Simulated: true, Out: &out,
		Run: func(_ context.Context, s steps.Step) error { ran = append(ran, s.Target); return nil }})
	if err != nil || strings.Join(ran, " ") != "run grow" || !strings.Contains(out.String(), "skipped: this step needs real Kafka") {
		t.Fatalf("ran %v, err %v:\n%s", ran, err, out.String())
	}
}

func TestAutoNeedsNoInput(t *testing.T) {
	start := time.Now()
	err := Run(context.Background(), lecture(), Options{Auto: true, Pause: 10 * time.Millisecond, Out: &bytes.Buffer{},
		Run: func(context.Context, steps.Step) error { return nil }})
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("auto: %v in %s", err, time.Since(start))
	}
}

// Every lecture has a walk-through the tour can take: it parses, and each
// step's command is a target of the lecture's Makefile.
func TestEveryLectureHasATour(t *testing.T) {
	dirs, _ := filepath.Glob("../../lectures/[0-9][0-9]-*")
	if len(dirs) < 9 {
		t.Fatalf("%d lectures, want at least part one's 9", len(dirs))
	}
	for _, d := range dirs {
		l, err := steps.Read(filepath.Join(d, steps.File))
		if err != nil {
			t.Error(err)
			continue
		}
		mk, err := os.ReadFile(filepath.Join(d, "Makefile"))
		if err != nil {
			t.Fatal(err)
		}
		shared, err := os.ReadFile(filepath.Join(d, "..", "lecture.mk"))
		if err != nil {
			t.Fatal(err)
		}
		mk = append(append([]byte{}, shared...), mk...)
		for _, s := range l.Steps {
			if !strings.Contains(string(mk), "\n"+s.Target+":") {
				t.Errorf("%s: step %q: no target %s in the Makefile", d, s.Title, s.Target)
			}
		}
	}
}
