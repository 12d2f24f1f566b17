// Command brewcontainers runs the course cluster in containers with
// testcontainers-go (package brewcontainers) for as long as something needs it.
//
//	brewcontainers run -- CMD [ARGS]   start the cluster, run CMD with KAFKA_BOOTSTRAP
//	                                   pointing at it, remove the cluster, exit as CMD did
//	brewcontainers serve               start the cluster, print its KAFKA_BOOTSTRAP on
//	                                   stdout, remove it when stdin closes (the parent
//	                                   ended, even by a crash) or on Ctrl-C / SIGTERM
//	brewcontainers clean               remove containers and networks an earlier run left
//
// BREW_CONTAINERS_VERBOSE=1 shows testcontainers-go's own log.
// make test-containers runs every lecture's smoke tests under `run`; brewtest
// starts `serve` for a test process when BREW_CLUSTER=containers is set.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/brew-course/kafka/pkg/brewcontainers"
)

const usage = `usage:
  brewcontainers run -- CMD [ARGS]   run CMD against a fresh three-node cluster in containers
  brewcontainers serve               print the cluster's KAFKA_BOOTSTRAP; remove it when stdin closes
  brewcontainers clean               remove what an interrupted run left behind
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// testcontainers-go logs every container step; our own lines say enough.
	if os.Getenv("BREW_CONTAINERS_VERBOSE") != "1" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	code, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "brewcontainers:", err)
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2, nil
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0, nil
	case "run":
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			fmt.Fprint(os.Stderr, usage)
			return 2, nil
		}
		return runCommand(ctx, rest)
	case "serve":
		return serve(ctx)
	case "clean":
		return clean(ctx)
	}
	fmt.Fprintf(os.Stderr, "brewcontainers: unknown verb %q\n%s", args[0], usage)
	return 2, nil
}

func start(ctx context.Context) (*brewcontainers.Cluster, func(), error) {
	began := time.Now()
	fmt.Fprintf(os.Stderr, "brewcontainers: starting three Kafka nodes from %s...\n", brewcontainers.Image())
	c, err := brewcontainers.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "brewcontainers: cluster ready in %s on %s\n", time.Since(began).Round(100*time.Millisecond), c.Bootstrap())
	remove := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Terminate(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "brewcontainers: removing the cluster:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "brewcontainers: cluster removed")
	}
	return c, remove, nil
}

func runCommand(ctx context.Context, argv []string) (int, error) {
	c, remove, err := start(ctx)
	if err != nil {
		return 1, err
	}
	defer remove()
	// The child gets its own Ctrl-C from the terminal; ctx ending (our
	// SIGTERM) stops it.
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+c.Bootstrap())
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return max(exit.ExitCode(), 1), nil
		}
		return 1, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return 0, nil
}

func serve(ctx context.Context) (int, error) {
	c, remove, err := start(ctx)
	if err != nil {
		return 1, err
	}
	defer remove()
	fmt.Println(c.Bootstrap())
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return 0, nil
}

func clean(ctx context.Context) (int, error) {
	for _, what := range [][]string{
		{"docker", "ps", "-aq", "--filter", "label=" + brewcontainers.Label},
		{"docker", "network", "ls", "-q", "--filter", "label=" + brewcontainers.Label},
	} {
		out, err := exec.CommandContext(ctx, what[0], what[1:]...).Output()
		if err != nil {
			return 1, fmt.Errorf("%s: %w", strings.Join(what, " "), err)
		}
		ids := strings.Fields(string(out))
		if len(ids) == 0 {
			continue
		}
		rm := []string{"rm", "-fv"}
		if what[1] == "network" {
			rm = []string{"network", "rm"}
		}
		if out, err := exec.CommandContext(ctx, "docker", append(rm, ids...)...).CombinedOutput(); err != nil {
			return 1, fmt.Errorf("docker %s: %v: %s", rm[0], err, out)
		}
		fmt.Fprintf(os.Stderr, "brewcontainers: removed %d %s\n", len(ids), map[bool]string{true: "networks", false: "containers"}[what[1] == "network"])
	}
	return 0, nil
}
