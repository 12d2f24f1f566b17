package stand

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// docker runs three apache/kafka:4.2.0 containers with docker compose.
type docker struct{ s *Stand }

func (d *docker) compose(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"compose", "-f", filepath.Join(d.s.Root, "stand", "docker-compose.yml")}, args...)
	cmd := exec.CommandContext(ctx, "docker", all...)
	cmd.Dir = d.s.Root
	return cmd
}

func (d *docker) run(ctx context.Context, args ...string) error {
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

func (d *docker) stop(ctx context.Context) error { return d.run(ctx, "down") }

func (d *docker) stopNode(ctx context.Context, n int, kill bool) error {
	if kill {
		return d.run(ctx, "kill", service(n))
	}
	return d.run(ctx, "stop", service(n))
}

func (d *docker) startNode(ctx context.Context, n int) error { return d.run(ctx, "start", service(n)) }

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

func (d *docker) reset(ctx context.Context) error { return d.run(ctx, "down", "-v") }

// tool runs the script from Kafka's distribution inside a running container.
func (d *docker) tool(ctx context.Context, name string, args []string) (*exec.Cmd, error) {
	for _, n := range Nodes {
		if up, _ := d.running(n); !up {
			continue
		}
		all := []string{"exec", service(n), "/opt/kafka/bin/" + name + ".sh"}
		if tools[name].bootstrap {
			all = append(all, "--bootstrap-server", fmt.Sprintf("%s:9092", service(n)))
		}
		return exec.CommandContext(ctx, "docker", append(all, args...)...), nil
	}
	return nil, fmt.Errorf("no container of the docker stand is running")
}

func (d *docker) dataDir(int) string { return "/var/lib/kafka/data" }

// dockerAnswers reports whether a Docker engine answers (not only a client).
func dockerAnswers(ctx context.Context) error {
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
