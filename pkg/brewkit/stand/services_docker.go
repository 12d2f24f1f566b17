package stand

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// container runs a service as its compose service of the docker stand
// (stand/docker-compose.yml, profile NAME, so `make up` never starts it).
// None of the services' images can be pulled on the machine the course is
// built on, so this path is held to the compose file by tests only; where
// the image is missing, the service runs as a host process beside the
// docker nodes instead (placement).
type container struct {
	s   *Stand
	svc Service
}

func (c *container) compose(ctx context.Context, args ...string) *exec.Cmd {
	return (&docker{s: c.s}).compose(ctx, append([]string{"--profile", c.svc.Name}, args...)...)
}

func (c *container) run(ctx context.Context, limit time.Duration, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if out, err := c.compose(ctx, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("docker compose %s: %v: %s", strings.Join(args, " "), err, lastLine(out))
	}
	return nil
}

func (c *container) installed() (bool, string) { return true, "image " + c.svc.Image }
func (c *container) install(context.Context) error {
	return nil // placement chose the container because its image is there
}

func (c *container) start(ctx context.Context) error {
	return c.run(ctx, 2*time.Minute, "up", "-d", c.svc.Name)
}

func (c *container) running() (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := c.compose(ctx, "ps", "--status", "running", "--services").Output()
	if err != nil || !slices.Contains(strings.Fields(string(out)), c.svc.Name) {
		return false, ""
	}
	return true, "container " + composeProject + "-" + c.svc.Name + "-1"
}

func (c *container) stop(ctx context.Context) error {
	return c.run(ctx, 90*time.Second, "rm", "--stop", "--force", c.svc.Name)
}

func (c *container) logFile() string { return "`make services-logs S=" + c.svc.Name + "`" }

func (c *container) logs(w io.Writer) error {
	cmd := c.compose(context.Background(), "logs", "--tail", "200", c.svc.Name)
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}

// reset leaves the volume to the docker stand's own reset (down -v, with
// every service's profile), which `make reset` runs when Docker answers.
func (c *container) reset(context.Context) error { return nil }

func (c *container) hasState() bool { return false }

// serviceProfiles are the compose profiles the docker stand's down and
// reset name, so that a service container goes with the nodes.
func serviceProfiles() []string {
	var args []string
	for _, svc := range services {
		args = append(args, "--profile", svc.Name)
	}
	return args
}

// pullWithin bounds `docker pull` of a service's missing image: where no
// registry answers, the service runs as a host process instead.
const pullWithin = 20 * time.Second

// imageUnavailable is "" when image is on this machine or pulls within
// pullWithin; else why not, for the status. A variable, so tests can stand
// in for Docker.
var imageUnavailable = func(ctx context.Context, image string) string {
	if engineAnswers(ctx) != nil {
		return "no Docker engine answers"
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if exec.CommandContext(ictx, "docker", "image", "inspect", image).Run() == nil {
		return ""
	}
	pctx, cancel := context.WithTimeout(ctx, pullWithin)
	defer cancel()
	if exec.CommandContext(pctx, "docker", "pull", "-q", image).Run() == nil {
		return ""
	}
	return image + " cannot be pulled here"
}
