// Command tour is `make tour L=NN`: it walks through a lecture's steps
// (steps.txt), running each step's make target and pausing for Enter, or
// going on by itself with -auto (AUTO=1).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/steps"
	"github.com/brew-course/kafka/stand/tour"
)

func main() {
	auto := flag.Bool("auto", os.Getenv("AUTO") == "1", "go on by itself after each step (AUTO=1)")
	pause := flag.Duration("pause", 3*time.Second, "with -auto, the pause after each step")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tour [-auto] [-pause 3s] LECTURE_DIR\n\nWalks through the lecture's steps.txt: explanation, command, run, Enter.")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*pause >= 0, "pause", *pause, "must not be negative")
	fc.ExitOnUsageError("tour")
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir, number, err := lectureDir(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(2)
	}
	l, err := steps.Read(filepath.Join(dir, steps.File))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(2)
	}
	// Ctrl-C during a step interrupts the step (its program stops cleanly)
	// and then the tour; between steps it ends the tour.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = tour.Run(ctx, l, tour.Options{
		Title: "Lecture " + number, Auto: *auto, Pause: *pause, Simulated: simulated(ctx),
		In: os.Stdin, Out: os.Stdout,
		Run: func(ctx context.Context, s steps.Step) error { return runStep(ctx, dir, s) },
	})
	const restore = "`make restore` brings back any node a step left stopped"
	switch {
	case err == nil:
	case errors.Is(err, tour.ErrQuit):
		fmt.Println("\ntour stopped; " + restore)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// Ctrl-C (or SIGTERM): the status of an interrupted program, as
		// brewkit.Main gives every course program.
		fmt.Println()
		fmt.Fprintln(os.Stderr, "tour: interrupted; "+restore)
		os.Exit(130)
	default:
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}

// lectureName is a lecture folder's name: NN-slug.
var lectureName = regexp.MustCompile(`^([0-9]{2})-[a-z0-9-]+$`)

// lectureDir resolves arg (".", "lectures/01-architecture-kraft", ...) to an
// absolute lecture folder and returns it with the lecture's number ("01").
func lectureDir(arg string) (dir, number string, err error) {
	dir, err = filepath.Abs(arg)
	if err != nil {
		return "", "", err
	}
	m := lectureName.FindStringSubmatch(filepath.Base(dir))
	if m == nil {
		return "", "", fmt.Errorf("%s is not a lecture folder (lectures/NN-slug): run `make tour L=NN` at the root, or `tour .` in a lecture's folder", dir)
	}
	return dir, m[1], nil
}

// simulated reports whether the cluster that answers is the embedded
// simulation (or none answers: then the first step starts the embedded
// stand, as `make run` does).
func simulated(ctx context.Context) bool {
	cfg, err := brewkit.FromEnv()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return true
	}
	defer cl.Close()
	sim, err := brewkit.IsSimulated(ctx, cl)
	return err == nil && sim
}

// runStep runs `make -C dir TARGET VARS...` in a process group of its own, so
// that a live view is stopped with Ctrl-C (SIGINT to the whole group: make,
// go run and the program) after s.Stop, or when the tour itself is interrupted.
func runStep(ctx context.Context, dir string, s steps.Step) error {
	args := append([]string{"--no-print-directory", "-C", dir, s.Target}, s.Vars...)
	cmd := exec.Command("make", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if s.Stop > 0 {
		timer = time.After(s.Stop)
	}
	planned, interrupted := false, false
	for {
		select {
		case err := <-done:
			if planned {
				// Stopped by us, as a student would with Ctrl-C; make's
				// "Error 130" line above is that Ctrl-C, not a failure.
				fmt.Println("(stopped with Ctrl-C, as planned)")
				return nil
			}
			if interrupted {
				return nil // the tour was interrupted: Run returns ctx.Err()
			}
			return err
		case <-timer:
			planned = true
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			timer = nil
		case <-ctx.Done():
			interrupted = true
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			ctx = context.Background() // wait for the step to end
		}
	}
}
