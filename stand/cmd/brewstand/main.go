// Command brewstand starts, stops and inspects the course cluster on any of its
// three stands. The root Makefile's verbs (make up, down, status, stop-node,
// start-node, logs, reset) call it through scripts/brewstand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
	"github.com/brew-course/kafka/pkg/brewkit/steps"
)

var usage = `usage: brewstand VERB [ARGS]

verbs:
  up [-stand auto|docker|native|embedded]   start the cluster and wait until it is ready
  down                                      stop the cluster (data is kept)
  status                                    flavor, each node's process, the quorum leader
  stop-node [-kill] N                       stop node N (SIGTERM; -kill for SIGKILL)
  start-node N                              start node N again on its data
  pause-node N                              freeze node N (SIGSTOP; docker pause; simulated on embedded)
  resume-node N                             let a paused node N go on
  logs [N]                                  the recent log of node N (default 1)
  reset                                     stop the cluster and wipe its data
  ensure                                    start the embedded stand if no cluster answers
  leader                                    print the node id of the quorum leader
  tool [-node N] NAME [ARGS]                run a Kafka CLI tool (e.g. kafka-topics) on the stand (on node N's machine)
  datadir N                                 print node N's data directory as the tools see it
  doctor                                    check this machine and the cluster for the course; exit 1 if no stand can run
  reset-lecture DIR                         delete the topics and groups (with their configs) of the lecture in DIR
  jars                                      fetch Kafka's jars once (Maven) and print their folder
  tools                                     list the Kafka tools the stand runs: NAME CLASS
  version                                   print the Kafka release the course runs (` + stand.KafkaVersion + `)
`

// errUsage marks a usage error: exit status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "brewstand:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	verb, args := args[0], args[1:]
	if verb == "-h" || verb == "--help" || verb == "help" {
		fmt.Fprint(out, usage)
		return nil
	}
	s, err := stand.Find()
	if err != nil {
		return err
	}
	s.Out = out

	switch verb {
	case "up":
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		name := fs.String("stand", envOr("STAND", "auto"), "auto, docker, native or embedded")
		if err := fs.Parse(args); err != nil {
			return errUsage
		}
		f, err := stand.ParseFlavor(*name)
		if err != nil {
			return err
		}
		return s.Up(ctx, f)
	case "down":
		return s.Down(ctx)
	case "reset":
		return s.Reset(ctx)
	case "status":
		st, err := s.Status(ctx)
		if err != nil {
			return err
		}
		st.Print(out)
		return nil
	case "stop-node":
		fs := flag.NewFlagSet("stop-node", flag.ContinueOnError)
		kill := fs.Bool("kill", os.Getenv("KILL") == "1", "SIGKILL instead of SIGTERM")
		if err := fs.Parse(args); err != nil {
			return errUsage
		}
		n, err := nodeArg(fs.Args())
		if err != nil {
			return err
		}
		return s.StopNode(ctx, n, *kill)
	case "start-node":
		n, err := nodeArg(args)
		if err != nil {
			return err
		}
		return s.StartNode(ctx, n)
	case "pause-node", "resume-node":
		n, err := nodeArg(args)
		if err != nil {
			return err
		}
		if verb == "pause-node" {
			return s.PauseNode(ctx, n)
		}
		return s.ResumeNode(ctx, n)
	case "logs":
		n := 1
		if len(args) > 0 {
			if n, err = nodeArg(args); err != nil {
				return err
			}
		}
		return s.Logs(n, out)
	case "ensure":
		cfg, err := brewkit.FromEnv()
		if err != nil {
			return err
		}
		return s.Ensure(ctx, cfg)
	case "leader":
		return leader(ctx, out)
	case "datadir":
		n, err := nodeArg(args)
		if err != nil {
			return err
		}
		dir, err := s.DataDir(n)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, dir)
		return nil
	case "doctor":
		cfg, err := brewkit.FromEnv()
		if err != nil {
			return err
		}
		d := s.Doctor(ctx, cfg)
		d.Print(out)
		if !d.OK() {
			return errors.New("no stand can run on this machine: see the fixes above")
		}
		return nil
	case "reset-lecture":
		if len(args) != 1 {
			return errUsage
		}
		l, err := steps.Read(filepath.Join(args[0], steps.File))
		if err != nil {
			return err
		}
		cfg, err := brewkit.FromEnv()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cl, _, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		topics, groups, err := steps.Reset(ctx, cl, l)
		fmt.Fprintf(out, "reset-lecture %s: deleted %d groups %v and %d topics %v\n", filepath.Base(args[0]), len(groups), groups, len(topics), topics)
		return err
	case "jars":
		s.Out = os.Stderr // the folder alone on stdout, for scripts
		dir, err := s.FetchJars(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, dir)
		return nil
	case "version":
		fmt.Fprintln(out, stand.KafkaVersion)
		return nil
	case "tools":
		for _, t := range stand.Tools() {
			fmt.Fprintln(out, t.Name, t.Class)
		}
		return nil
	case "tool":
		node := 0
		if len(args) >= 2 && args[0] == "-node" {
			n, err := nodeArg(args[1:2])
			if err != nil {
				return err
			}
			node, args = n, args[2:]
		}
		if len(args) == 0 {
			return errUsage
		}
		cmd, err := s.ToolOn(ctx, node, args[0], args[1:]...)
		if err != nil {
			return err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, os.Stderr
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return fmt.Errorf("%s exited with status %d", args[0], exit.ExitCode())
			}
			return err
		}
		return nil
	}
	fmt.Fprintf(os.Stderr, "brewstand: unknown verb %q\n", verb)
	return errUsage
}

func leader(ctx context.Context, out io.Writer) error {
	cfg, err := brewkit.FromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	q, err := brewkit.DescribeQuorum(ctx, cl)
	if err != nil {
		return err
	}
	if q.LeaderID < 0 {
		return errors.New("the quorum has no leader right now")
	}
	fmt.Fprintln(out, q.LeaderID)
	return nil
}

func nodeArg(args []string) (int, error) {
	if len(args) != 1 {
		return 0, fmt.Errorf("name one node: 1, 2 or 3 (make ... N=2)")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 3 {
		return 0, fmt.Errorf("node %q: the nodes are 1, 2 and 3", args[0])
	}
	return n, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
