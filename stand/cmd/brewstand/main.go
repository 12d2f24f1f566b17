// Command brewstand starts, stops and inspects the course cluster on any of its
// three stands, and the services beside it. The root Makefile's verbs (make
// up, down, status, stop-node, start-node, logs, reset, services-up) call it
// through scripts/brewstand. Each verb is one function below.
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
  down [-all]                               stop the services beside the cluster, then the cluster (data is kept);
                                            -all: every instance of the stand in this checkout too
  status                                    flavor, each node's process, the quorum leader, the services
  stop-node [-kill] N                       stop node N (SIGTERM; -kill for SIGKILL)
  start-node N                              start node N again on its data (N=4: lecture 15's fourth node, a broker)
  pause-node N                              freeze node N (SIGSTOP; docker pause; simulated on embedded)
  resume-node N                             let a paused node N go on
  logs [N]                                  the recent log of node N (default 1)
  reset                                     stop the cluster and the services and wipe their data
  ensure [SERVICE...]                       start the embedded stand if no cluster answers (a real one if a
                                            service needs real Kafka), then start the services named
  services up SERVICE...                    start services beside the cluster (installed on first use)
  services down [SERVICE...]                stop them (default: every one that runs; data is kept)
  services status                           each service that runs or has state: address, process, ready
  services logs SERVICE                     the recent log of a service
  leader                                    print the node id of the quorum leader
  tool [-node N] NAME [ARGS]                run a Kafka CLI tool (e.g. kafka-topics) on the stand (on node N's machine)
  datadir N                                 print node N's data directory as the tools see it
  doctor                                    check this machine, the services and the cluster; exit 1 if no stand can run
  reset-lecture DIR                         delete the topics and groups (with their configs) of the lecture in DIR
  jars                                      fetch Kafka's jars once (Maven) and print their folder
  tools                                     list the Kafka tools the stand runs: NAME CLASS
  bootstrap                                 print the stand's client addresses (KAFKA_BOOTSTRAP for its instance)
  version                                   print the Kafka release the course runs (` + stand.KafkaVersion + `)

services: postgres (127.0.0.1:15432, lecture 11), connect (Kafka Connect with Debezium,
127.0.0.1:18083, lecture 11; needs real Kafka), prometheus (127.0.0.1:19090, lecture 13)

BREW_STAND_INSTANCE=N (1-9) works on another instance of the stand, for the test tiers: the
native stand on its own block of ports (node 1's client port 22N12 - 22112 for N=1), its
state in .stand/iN/, no services. Unset, the stand is the course's, on the contract ports.
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
	do, ok := verbs[verb]
	if !ok {
		fmt.Fprintf(os.Stderr, "brewstand: unknown verb %q\n", verb)
		return errUsage
	}
	return do(ctx, s, args, out)
}

// A verb runs one brewstand VERB on the stand s with the arguments after it.
type verb func(ctx context.Context, s *stand.Stand, args []string, out io.Writer) error

var verbs = map[string]verb{
	"up":            up,
	"down":          down,
	"reset":         func(ctx context.Context, s *stand.Stand, _ []string, _ io.Writer) error { return s.Reset(ctx) },
	"status":        status,
	"stop-node":     stopNode,
	"start-node":    startNode,
	"pause-node":    pauseNode,
	"resume-node":   resumeNode,
	"logs":          logs,
	"ensure":        ensure,
	"services":      services,
	"leader":        func(ctx context.Context, _ *stand.Stand, _ []string, out io.Writer) error { return leader(ctx, out) },
	"datadir":       datadir,
	"doctor":        doctor,
	"reset-lecture": resetLecture,
	"jars":          jars,
	"version":       version,
	"bootstrap": func(_ context.Context, s *stand.Stand, _ []string, out io.Writer) error {
		_, err := fmt.Fprintln(out, stand.Bootstrap(s.InstanceNumber()))
		return err
	},
	"tools": tools,
	"tool":  tool,
}

// down stops this instance's stand; with -all every instance's too.
func down(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	all := fs.Bool("all", false, "stop every instance of the stand in this checkout, not only this one")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *all {
		return s.DownAll(ctx)
	}
	return s.Down(ctx)
}

func up(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
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
}

// status prints the stand and its services; with no stand up, the services
// that run or have state, then the error.
func status(ctx context.Context, s *stand.Stand, _ []string, out io.Writer) error {
	st, err := s.Status(ctx)
	if err != nil {
		stand.PrintServices(out, st.Services)
		printInstances(s, out)
		return err
	}
	st.Print(out)
	printInstances(s, out)
	return nil
}

// printInstances names the other instances of the stand that are up (the
// test tiers start them; `make down` stops them).
func printInstances(s *stand.Stand, out io.Writer) {
	for _, o := range s.Instances() {
		if o.InstanceNumber() != s.InstanceNumber() {
			fmt.Fprintf(out, "instance %d: %s stand up on %s (a test tier's; `make down` stops it)\n", o.InstanceNumber(), o.Current(), stand.Bootstrap(o.InstanceNumber()))
		}
	}
}

func stopNode(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
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
}

func startNode(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
	n, err := nodeArg(args)
	if err != nil {
		return err
	}
	return s.StartNode(ctx, n)
}

func pauseNode(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
	n, err := nodeArg(args)
	if err != nil {
		return err
	}
	return s.PauseNode(ctx, n)
}

func resumeNode(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
	n, err := nodeArg(args)
	if err != nil {
		return err
	}
	return s.ResumeNode(ctx, n)
}

func logs(_ context.Context, s *stand.Stand, args []string, out io.Writer) error {
	n := 1
	if len(args) > 0 {
		var err error
		if n, err = nodeArg(args); err != nil {
			return err
		}
	}
	return s.Logs(n, out)
}

// ensure starts the embedded stand if no cluster answers, then the services
// named (a real stand instead when one of them needs real Kafka).
func ensure(ctx context.Context, s *stand.Stand, args []string, _ io.Writer) error {
	cfg, err := brewkit.FromEnv()
	if err != nil {
		return err
	}
	return s.Ensure(ctx, cfg, args...)
}

// services runs `services up NAME...`, `services down [NAME...]`,
// `services status` and `services logs NAME`.
func services(ctx context.Context, s *stand.Stand, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	sub, names := args[0], args[1:]
	switch sub {
	case "up":
		return s.StartServices(ctx, names...)
	case "down":
		return s.StopServices(ctx, names...)
	case "status":
		st := s.ServiceStatuses(ctx)
		if len(st) == 0 {
			fmt.Fprintln(out, "no service runs or has state; start one with `make services-up S=NAME` (postgres, prometheus, connect)")
			return nil
		}
		stand.PrintServices(out, st)
		return nil
	case "logs":
		if len(names) != 1 {
			return fmt.Errorf("name one service: make services-logs S=postgres")
		}
		return s.ServiceLogs(names[0], out)
	}
	fmt.Fprintf(os.Stderr, "brewstand: unknown services verb %q\n", sub)
	return errUsage
}

func datadir(_ context.Context, s *stand.Stand, args []string, out io.Writer) error {
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
}

func doctor(ctx context.Context, s *stand.Stand, _ []string, out io.Writer) error {
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
}

func resetLecture(ctx context.Context, _ *stand.Stand, args []string, out io.Writer) error {
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
	for _, f := range l.Files {
		if rerr := os.RemoveAll(filepath.Join(args[0], f)); rerr != nil {
			return fmt.Errorf("deleting %s: %w", f, rerr)
		}
		fmt.Fprintf(out, "reset-lecture %s: deleted %s (local state)\n", filepath.Base(args[0]), f)
	}
	if err != nil || len(l.Users) == 0 {
		return err
	}
	users, err := steps.ResetUsers(ctx, cl, l)
	fmt.Fprintf(out, "reset-lecture %s: deleted the ACLs, quotas and SCRAM passwords of %d users %v\n", filepath.Base(args[0]), len(users), users)
	return err
}

func jars(ctx context.Context, s *stand.Stand, _ []string, out io.Writer) error {
	s.Out = os.Stderr // the folder alone on stdout, for scripts
	dir, err := s.FetchJars(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, dir)
	return nil
}

func version(_ context.Context, _ *stand.Stand, _ []string, out io.Writer) error {
	fmt.Fprintln(out, stand.KafkaVersion)
	return nil
}

func tools(_ context.Context, _ *stand.Stand, _ []string, out io.Writer) error {
	for _, t := range stand.Tools() {
		fmt.Fprintln(out, t.Name, t.Class)
	}
	return nil
}

// tool runs a Kafka command-line tool, on node N's machine with -node N.
func tool(ctx context.Context, s *stand.Stand, args []string, out io.Writer) error {
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
		return 0, fmt.Errorf("name one node: 1, 2 or 3, or 4 (lecture 15's broker) (make ... N=2)")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 4 {
		return 0, fmt.Errorf("node %q: the nodes are 1, 2 and 3, and 4 (lecture 15's broker, native and docker only)", args[0])
	}
	return n, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
