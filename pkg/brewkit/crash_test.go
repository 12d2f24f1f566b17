package brewkit_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Crashed tells a process killed with SIGKILL from one that failed or ended.
func TestCrashedIsSIGKILLOnly(t *testing.T) {
	require.True(t, brewkit.Crashed(exec.Command("sh", "-c", "kill -9 $$").Run()))
	require.False(t, brewkit.Crashed(exec.Command("sh", "-c", "kill -15 $$").Run()))
	require.False(t, brewkit.Crashed(exec.Command("sh", "-c", "exit 1").Run()))
	require.False(t, brewkit.Crashed(exec.Command("true").Run()))
}

// A child program gets the cluster's brokers, the caller's args after its own,
// and the caller's stderr.
func TestCommandPointsTheChildAtTheCluster(t *testing.T) {
	t.Setenv(brewkit.EnvBootstrap, "127.0.0.1:1")
	cfg := brewkit.Config{Brokers: []string{"127.0.0.1:19092", "127.0.0.1:19093"}}
	cmd := brewkit.Command(context.Background(), cfg, []string{"sh", "-c", `echo "$KAFKA_BOOTSTRAP $0 $1"`}, "barista", "-take")
	require.Equal(t, os.Stderr, cmd.Stderr)
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:19092,127.0.0.1:19093 barista -take\n", string(out))
}
