package windows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
	"github.com/brew-course/kafka/lectures/14-stream-processing/windows"
)

// make windows: the service takes the out-of-order orders and drops the
// too-late ones exactly as the till meant them, its windows equal the
// batch recount's, and it prints what the README shows.
func TestWindowsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := windows.Run(ctx, env.Config, till.Defaults, t.TempDir(), func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Equal(t, res.Written.Meant, res.Counts)
	require.Equal(t, res.Written.Meant, res.Recount.Counts)
	require.Positive(t, res.Counts.TooLate)
	differ, extra := window.Diff(res.Recount.Totals, res.Totals)
	require.Empty(t, differ)
	require.Zero(t, extra)
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "windows", b.String())
}
