package stand

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// docker runs three apache/kafka:4.2.0 containers with docker compose.
type docker struct {
	s     *Stand
	runFn func(ctx context.Context, args ...string) error // tests record the calls; nil runs docker compose
}

// composeProject names the compose project on every call, so that a
// COMPOSE_PROJECT_NAME in the user's environment (which beats the file's own
// name:) cannot point the stand at other containers and volumes.
const composeProject = "brew"

func (d *docker) compose(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"compose", "-p", composeProject, "-f", filepath.Join(d.s.Root, "stand", "docker-compose.yml")}, args...)
	cmd := exec.CommandContext(ctx, "docker", all...)
	cmd.Dir = d.s.Root
	return cmd
}

func (d *docker) run(ctx context.Context, args ...string) error {
	if d.runFn != nil {
		return d.runFn(ctx, args...)
	}
	cmd := d.compose(ctx, args...)
	cmd.Stdout, cmd.Stderr = d.s.Out, d.s.Out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func service(n int) string { return fmt.Sprintf("kafka-%d", n) }

func (d *docker) ports() []int { return []int{ClientPort(1), ClientPort(2), ClientPort(3)} }

func (d *docker) start(ctx context.Context) error {
	if err := dockerAnswers(ctx); err != nil {
		return fmt.Errorf("the docker stand needs a running Docker engine (%v); try `make up STAND=native`", err)
	}
	return d.run(ctx, "up", "-d", "--wait")
}

// stop takes the optional ui profile down too: a UI started with
// --profile ui would otherwise keep running, and keep the network.
func (d *docker) stop(ctx context.Context) error { return d.run(ctx, "--profile", "ui", "down") }

func (d *docker) stopNode(ctx context.Context, n int, kill bool) error {
	if kill {
		return d.run(ctx, "kill", service(n))
	}
	return d.run(ctx, "stop", service(n))
}

func (d *docker) startNode(ctx context.Context, n int) error { return d.run(ctx, "start", service(n)) }

func (d *docker) pauseNode(ctx context.Context, n int) error { return d.run(ctx, "pause", service(n)) }
func (d *docker) resumeNode(ctx context.Context, n int) error {
	return d.run(ctx, "unpause", service(n))
}

func (d *docker) paused(n int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := d.compose(ctx, "ps", "--status", "paused", "--services").Output()
	return err == nil && slices.Contains(strings.Fields(string(out)), service(n))
}

func (d *docker) running(n int) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := d.compose(ctx, "ps", "--status", "running", "--services").Output()
	if err != nil {
		return false, ""
	}
	for _, s := range strings.Fields(string(out)) {
		if s == service(n) {
			return true, "container " + s
		}
	}
	return false, ""
}

func (d *docker) logs(n int, w io.Writer) error {
	cmd := d.compose(context.Background(), "logs", "--tail", "200", service(n))
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}

func (d *docker) reset(ctx context.Context) error { return d.run(ctx, "--profile", "ui", "down", "-v") }

// tool runs the script from Kafka's distribution inside node's container
// (node 0: the first one running), with -i so that a pipe into it (the console
// producer) reaches the tool. Tools that talk to the cluster get all three
// brokers, so one that is down does not stall them.
func (d *docker) tool(ctx context.Context, node int, name string, args []string) (*exec.Cmd, error) {
	if node == 0 {
		for _, n := range Nodes {
			if up, _ := d.running(n); up {
				node = n
				break
			}
		}
		if node == 0 {
			return nil, fmt.Errorf("no container of the docker stand is running")
		}
	} else if up, _ := d.running(node); !up {
		return nil, fmt.Errorf("node %d of the docker stand is not running: its tools and data are in its container (make start-node N=%d)", node, node)
	}
	return exec.CommandContext(ctx, "docker", dockerToolArgs(node, name, args)...), nil
}

func dockerToolArgs(node int, name string, args []string) []string {
	all := []string{"exec", "-i", service(node), "/opt/kafka/bin/" + name + ".sh"}
	if tools[name].bootstrap {
		all = append(all, "--bootstrap-server", "kafka-1:9092,kafka-2:9092,kafka-3:9092")
	}
	return append(all, args...)
}

// dataDir is the same path in every container; tool(node) runs in node's.
func (d *docker) dataDir(int) string { return "/var/lib/kafka/data" }

// dockerAnswers reports whether a Docker engine answers (not only a client)
// and the Compose v2 plugin is there (`docker compose`; Compose v1 rejects
// the stand's file). A variable, so tests can stand in for Docker.
var dockerAnswers = func(ctx context.Context) error {
	if err := engineAnswers(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, "docker", "compose", "version").Run(); err != nil {
		return fmt.Errorf("a Docker engine answers but the Compose v2 plugin (`docker compose`) is missing")
	}
	return nil
}

func engineAnswers(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("docker is not installed")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}")
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || len(bytes.TrimSpace(out)) == 0 {
		return fmt.Errorf("no Docker engine answers")
	}
	return nil
}
