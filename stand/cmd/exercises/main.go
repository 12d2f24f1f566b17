// Command exercises lists, grades and proves the course's graded exercises:
//
//	exercises list [-lecture NN]             make exercise L=NN
//	exercises check -lecture NN [-ex NAME]   make check L=NN EX=NAME
//	exercises progress                       make progress
//	exercises prove [-lecture NN] [-sim]     CI: every solution passes, every stub and wrong solution fails
//
// A grader runs on the cluster KAFKA_BOOTSTRAP names, else on the course
// stand when one is up, else (for an exercise graded on any stand) on an
// in-process simulation.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
	"github.com/brew-course/kafka/stand/exercises"
)

const usage = `usage: exercises list [-lecture NN]
       exercises check -lecture NN [-ex NAME]
       exercises progress
       exercises prove [-lecture NN] [-sim] [-p 3] [-alone only|skip]`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	verb := os.Args[1]
	fs := flag.NewFlagSet("exercises "+verb, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, usage); fs.PrintDefaults() }
	lecture := fs.String("lecture", "", "the lecture's number, NN")
	name := fs.String("ex", "", "check: the exercise to grade (default: each of the lecture's)")
	sim := fs.Bool("sim", false, "prove: on an in-process simulation, the exercises graded on any stand only")
	par := fs.Int("p", 3, "prove: exercises graded at once")
	alone := fs.String("alone", "", "prove: only the exercises whose grader holds the stand alone (only), or all but those (skip); the real tier runs each beside the tests of its kind")
	fs.Parse(os.Args[2:])
	if fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	if *alone != "" && *alone != "only" && *alone != "skip" {
		fmt.Fprintf(os.Stderr, "exercises: -alone %q: want only or skip\n", *alone)
		os.Exit(2)
	}
	if *lecture != "" && (len(*lecture) != 2 || strings.Trim(*lecture, "0123456789") != "") {
		fmt.Fprintf(os.Stderr, "exercises: -lecture %q: want a lecture's two digits, as in L=02\n", *lecture)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s, err := stand.Find()
	if err != nil {
		fail(fmt.Errorf("finding the course checkout: %w", err))
	}
	root := s.Root
	var code int
	switch verb {
	case "list":
		err = list(os.Stdout, root, *lecture)
	case "check":
		if *lecture == "" {
			fmt.Fprintln(os.Stderr, "exercises: name the lecture: make check L=02 EX=partitioner (make exercise L=02 lists them)")
			os.Exit(2)
		}
		code, err = check(ctx, os.Stdout, root, *lecture, *name)
	case "progress":
		err = progress(os.Stdout, root)
	case "prove":
		code, err = prove(ctx, os.Stdout, root, *lecture, *alone, *sim, max(*par, 1))
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
	os.Exit(code)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "exercises:", err)
	os.Exit(1)
}

func find(root, lecture string) ([]exercises.Exercise, error) {
	all, err := exercises.Find(root, lecture)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 && lecture != "" {
		return nil, fmt.Errorf("lecture %s has no graded exercises (make progress lists every one)", lecture)
	}
	return all, nil
}

func list(w io.Writer, root, lecture string) error {
	all, err := find(root, lecture)
	if err != nil {
		return err
	}
	p, err := exercises.LoadProgress(root)
	if err != nil {
		return err
	}
	last := ""
	for _, ex := range all {
		if ex.Lecture != last {
			last = ex.Lecture
			fmt.Fprintf(w, "Lecture %s: `make check L=%s EX=NAME` grades one\n", ex.Lecture, ex.Lecture)
		}
		state, _ := p.State(root, ex)
		rel, _ := filepath.Rel(root, ex.Stub())
		fmt.Fprintf(w, "\n  %s: %s\n    graded on %s; %s\n    edit %s\n", ex.Name, ex.Title, ex.GradedOn(), state, rel)
		for _, l := range wrap(ex.Task, 76) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	return nil
}

// clusterEnv is the environment a grader gets: KAFKA_BOOTSTRAP when it is set
// or a stand answers on the course's addresses; else none, and a grader of an
// exercise graded on any stand starts an in-process simulation.
func clusterEnv(ctx context.Context) ([]string, string) {
	if b := os.Getenv(brewkit.EnvBootstrap); b != "" {
		return nil, b
	}
	cfg, err := brewkit.FromEnv()
	if err != nil {
		return nil, ""
	}
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return nil, ""
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if brewkit.Ping(pctx, cfg, cl) != nil {
		return nil, ""
	}
	return []string{brewkit.EnvBootstrap + "=" + brewkit.DefaultBootstrap}, brewkit.DefaultBootstrap
}

func check(ctx context.Context, w io.Writer, root, lecture, name string) (int, error) {
	all, err := find(root, lecture)
	if err != nil {
		return 0, err
	}
	if name != "" {
		var one []exercises.Exercise
		for _, ex := range all {
			if ex.Name == name {
				one = append(one, ex)
			}
		}
		if len(one) == 0 {
			names := []string{}
			for _, ex := range all {
				names = append(names, ex.Name)
			}
			return 0, fmt.Errorf("lecture %s has no exercise %q; it has: %s", lecture, name, strings.Join(names, ", "))
		}
		all = one
	}
	env, _ := clusterEnv(ctx)
	p, err := exercises.LoadProgress(root)
	if err != nil {
		return 0, err
	}
	code := 0
	for i, ex := range all {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s (graded on %s)\n", ex.ID(), ex.Title, ex.GradedOn())
		r, err := exercises.Run(ctx, ex, "", env)
		if err != nil {
			return 1, err
		}
		if r.On != "" {
			fmt.Fprintf(w, "on %s\n", r.On)
		}
		report(w, ex, r)
		p.Record(ex, r)
		if !r.Passed {
			code = 1
		}
	}
	return code, p.Save(root)
}

// report prints a grading's verdict: PASS, or each finding with its hint, or
// what kept the code from being graded.
func report(w io.Writer, ex exercises.Exercise, r exercises.Result) {
	if r.Passed {
		fmt.Fprintf(w, "PASS  %s in %.1f s\n", ex.ID(), r.Elapsed.Seconds())
		return
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAIL  %s\n", f.What)
		if f.Hint != "" {
			fmt.Fprintf(w, "hint  %s\n", f.Hint)
		}
	}
	if len(r.Broken) > 0 {
		fmt.Fprintf(w, "FAIL  %s could not be graded:\n", ex.ID())
		for i, l := range r.Broken {
			if i == 20 {
				fmt.Fprintf(w, "      ... (%d more lines)\n", len(r.Broken)-i)
				break
			}
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
}

func progress(w io.Writer, root string) error {
	all, err := find(root, "")
	if err != nil {
		return err
	}
	p, err := exercises.LoadProgress(root)
	if err != nil {
		return err
	}
	t := brewkit.NewTable(w, "EXERCISE", "GRADED ON", "STATE", "LAST CHECK")
	passed := 0
	for _, ex := range all {
		state, c := p.State(root, ex)
		last := "-"
		if c != nil {
			last = c.When.Local().Format("2006-01-02 15:04")
			if c.On != "" {
				last += " on " + c.On
			}
			if !c.Passed && c.First != "" {
				last += ": " + c.First
			}
		}
		if state == exercises.Passed {
			passed++
		}
		t.Row(ex.ID(), ex.GradedOn(), state, last)
	}
	t.Flush()
	fmt.Fprintf(w, "\n%d of %d passed. `make exercise L=NN` shows a lecture's tasks; `make check L=NN EX=NAME` grades one.\n", passed, len(all))
	return nil
}

// prove grades every exercise's stub, reference solution and wrong
// solutions: the solution must pass, the others must be failed by a finding
// of the grader (not by a build error or a panic).
func prove(ctx context.Context, w io.Writer, root, lecture, alone string, sim bool, par int) (int, error) {
	all, err := find(root, lecture)
	if err != nil {
		return 0, err
	}
	if alone != "" {
		var kept []exercises.Exercise
		for _, ex := range all {
			if ex.Alone == (alone == "only") {
				kept = append(kept, ex)
			}
		}
		all = kept
	}
	var env []string
	on := "an in-process simulation"
	if sim {
		env = []string{brewkit.EnvBootstrap + "=", "BREW_REQUIRE_REAL="}
		var any []exercises.Exercise
		for _, ex := range all {
			switch {
			case ex.Real:
			case len(ex.Needs) > 0:
				fmt.Fprintf(w, "%-28s skipped on the simulation: it needs %s (the real tier proves it)\n", ex.ID(), strings.Join(ex.Needs, ", "))
			default:
				any = append(any, ex)
			}
		}
		all = any
	} else {
		var b string
		env, b = clusterEnv(ctx)
		if b == "" {
			return 0, errors.New("prove needs a cluster: no stand is up (make up) and KAFKA_BOOTSTRAP is not set; -sim proves the exercises graded on any stand on a simulation")
		}
		on = b
	}
	fmt.Fprintf(w, "proving %d exercises' graders on %s, %d at once\n", len(all), on, par)
	start := time.Now()
	outs := make([]strings.Builder, len(all))
	bad := make([]int, len(all))
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	var mu sync.Mutex
	next := 0 // the next exercise whose lines to print, in order
	done := make([]bool, len(all))
	for i, ex := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			bad[i] = proveOne(ctx, &outs[i], ex, env)
			mu.Lock()
			defer mu.Unlock()
			done[i] = true
			for next < len(all) && done[next] {
				io.WriteString(w, outs[next].String())
				next++
			}
		}()
	}
	wg.Wait()
	failed := 0
	for _, b := range bad {
		failed += b
	}
	if ctx.Err() != nil {
		return 1, ctx.Err()
	}
	if failed > 0 {
		fmt.Fprintf(w, "prove FAILED: %d of the graders' verdicts above are wrong (%.0f s)\n", failed, time.Since(start).Seconds())
		return 1, nil
	}
	fmt.Fprintf(w, "every grader passed its solution and failed its stub and wrong solutions (%d exercises, %.0f s)\n", len(all), time.Since(start).Seconds())
	return 0, nil
}

// proveOne grades ex's three kinds of code and returns how many verdicts
// were wrong.
func proveOne(ctx context.Context, w io.Writer, ex exercises.Exercise, env []string) int {
	type variant struct {
		what, file string
		pass       bool
	}
	vs := []variant{{"stub", "", false}, {"solution", ex.Solution, true}}
	for _, f := range ex.Wrong {
		vs = append(vs, variant{strings.TrimSuffix(filepath.Base(f), ".go"), f, false})
	}
	if len(ex.Wrong) == 0 {
		fmt.Fprintf(w, "%-28s WRONG: no wrong_*.go beside its solution: a grader needs a plausible mistake it fails\n", ex.ID())
		return 1
	}
	bad := 0
	for _, v := range vs {
		r, err := exercises.Run(ctx, ex, v.file, env)
		verdict, first := "", ""
		switch {
		case err != nil:
			verdict, first = "WRONG", err.Error()
		case v.pass && r.Passed:
			verdict = "passes"
		case v.pass:
			verdict = "WRONG: fails"
		case r.Passed:
			verdict = "WRONG: passes"
		case !r.Graded():
			verdict = "WRONG: not graded"
		default:
			verdict = "fails"
		}
		if len(r.Failures) > 0 {
			first = r.Failures[0].What
		} else if len(r.Broken) > 0 {
			first = strings.Join(r.Broken, " | ")
		}
		if strings.HasPrefix(verdict, "WRONG") {
			bad++
		}
		fmt.Fprintf(w, "%-28s %-23s %-18s %5.1fs  %s\n", ex.ID(), v.what, verdict, r.Elapsed.Seconds(), first)
	}
	return bad
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
