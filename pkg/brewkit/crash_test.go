package brewkit_test

import (
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
