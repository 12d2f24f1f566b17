package stand

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The docker stand cannot always run where the tests do, so these hold the
// command lines it produces to what Docker needs.

func TestDockerComposeNamesItsProject(t *testing.T) {
	d := &docker{s: &Stand{Root: "/repo"}}
	args := d.compose(context.Background(), "up", "-d").Args
	// -p beats COMPOSE_PROJECT_NAME from the user's environment.
	require.Equal(t, []string{"docker", "compose", "-p", "brew", "-f", "/repo/stand/docker-compose.yml", "up", "-d"}, args)
}

// A tool runs without the container's KAFKA_OPTS, whose metrics agent would
// try to bind the node's metrics port.
func TestDockerToolRunsInTheNodeAskedForWithStdin(t *testing.T) {
	t.Setenv(EnvInstance, "") // the contract ports: instance 0, whatever the tier set
	args := dockerToolArgs(2, []int{1, 2, 3}, "kafka-console-producer", []string{"--topic", "t"})
	require.Equal(t, []string{"exec", "-i", "-e", "KAFKA_OPTS=", "kafka-2", "/opt/kafka/bin/kafka-console-producer.sh",
		"--bootstrap-server", "kafka-1:9092,kafka-2:9092,kafka-3:9092", "--topic", "t"}, args)
	args = dockerToolArgs(3, []int{3}, "kafka-topics", []string{"--describe"})
	require.Equal(t, []string{"exec", "-i", "-e", "KAFKA_OPTS=", "kafka-3", "/opt/kafka/bin/kafka-topics.sh",
		"--bootstrap-server", "kafka-3:9092", "--describe"}, args, "only running nodes: a stopped container's address drops connections")
	args = dockerToolArgs(3, []int{1, 2, 3}, "kafka-dump-log", []string{"--files", "x"})
	require.Equal(t, []string{"exec", "-i", "-e", "KAFKA_OPTS=", "kafka-3", "/opt/kafka/bin/kafka-dump-log.sh", "--files", "x"}, args, "no bootstrap for a tool that reads files")
}

// down and down -v name the ui profile and the services' profiles, so a UI
// or a service container started with its profile goes too.
func TestDockerDownTakesTheUIProfile(t *testing.T) {
	var got [][]string
	d := &docker{s: &Stand{Root: "/repo"}}
	record := func(_ context.Context, args ...string) error { got = append(got, args); return nil }
	d.runFn = record
	require.NoError(t, d.stop(context.Background()))
	require.NoError(t, d.reset(context.Background()))
	profiles := []string{"--profile", "ui", "--profile", "node4", "--profile", "postgres", "--profile", "prometheus", "--profile", "connect"}
	require.Equal(t, [][]string{append(profiles, "down"), append(slices.Clone(profiles), "down", "-v")}, got)
}

// Node 4 (lecture 15) is a service of its own profile: compose creates it
// on its first start and knows it only with the profile; nodes 1-3 are
// started and stopped as they were.
func TestDockerFourthNodeTakesItsProfile(t *testing.T) {
	var got [][]string
	d := &docker{s: &Stand{Root: "/repo"}}
	d.runFn = func(_ context.Context, args ...string) error { got = append(got, args); return nil }
	ctx := context.Background()
	require.NoError(t, d.startNode(ctx, 4))
	require.NoError(t, d.stopNode(ctx, 4, false))
	require.NoError(t, d.stopNode(ctx, 4, true))
	require.NoError(t, d.startNode(ctx, 2))
	require.Equal(t, [][]string{
		{"--profile", "node4", "up", "-d", "kafka-4"},
		{"--profile", "node4", "stop", "kafka-4"},
		{"--profile", "node4", "kill", "kafka-4"},
		{"start", "kafka-2"},
	}, got)
}

func TestAutoNeedsComposeV2ForDocker(t *testing.T) {
	defer func(d, j func(context.Context) error) { dockerAnswers, javaAndMaven = d, j }(dockerAnswers, javaAndMaven)
	javaAndMaven = func(context.Context) error { return nil }

	dockerAnswers = func(context.Context) error { return nil }
	f, why := Choose(context.Background(), Auto)
	require.Equal(t, Docker, f, why)

	dockerAnswers = func(context.Context) error {
		return errors.New("a Docker engine answers but the Compose v2 plugin (`docker compose`) is missing")
	}
	f, why = Choose(context.Background(), Auto)
	require.Equal(t, Native, f)
	require.Contains(t, why, "Compose v2 plugin")

	javaAndMaven = func(context.Context) error { return errors.New("java is not installed") }
	f, why = Choose(context.Background(), Auto)
	require.Equal(t, Embedded, f)
	require.True(t, strings.Contains(why, "Compose") && strings.Contains(why, "java is not installed"), why)
	require.False(t, slices.Contains([]Flavor{Docker, Native}, f))
}

// The docker stand's nodes run with the same JIT and collector as the
// native stand's (JIT and GC say why); brewcontainers' test holds its nodes
// to the compose file's settings, so this holds all three stands together.
func TestDockerNodesRunTheStandsJVM(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "stand", "docker-compose.yml"))
	require.NoError(t, err)
	var opts string
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && k == "KAFKA_JVM_PERFORMANCE_OPTS" {
			opts = strings.TrimSpace(v)
		}
	}
	require.NotEmpty(t, opts, "stand/docker-compose.yml sets no KAFKA_JVM_PERFORMANCE_OPTS")
	require.Contains(t, strings.Fields(opts), JIT, "stand/docker-compose.yml's KAFKA_JVM_PERFORMANCE_OPTS")
	require.Contains(t, strings.Fields(opts), GC, "stand/docker-compose.yml's KAFKA_JVM_PERFORMANCE_OPTS")
}
