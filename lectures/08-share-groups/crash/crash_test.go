package crash_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/crash"
)

// Tickets held by a barista process come back to another barista with
// delivery count 2: at once when the process is killed, after the
// acquisition lock when it is frozen.
func TestHeldTicketsComeBackReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := crash.Defaults
	c.Holder = []string{brewtest.BuildCmdAt(t, "../cmd/crash"), "hold"}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runs, err := crash.Demo(ctx, env.Config, c, []crash.How{crash.Kill, crash.Freeze}, func(s string) { t.Log(s) })
	require.NoError(t, err)
	for _, r := range runs {
		require.NotEmpty(t, r.Held, "%s: barista-1 held tickets", r.How)
		require.Equal(t, r.Held, r.Back, "%s: every held ticket came back", r.How)
		for _, n := range r.Counts {
			require.Equal(t, int32(2), n, "%s: second delivery", r.How)
		}
		require.Equal(t, c.Tickets-len(r.Held), r.Others, "%s: the free tickets went to barista-2 once", r.How)
	}
	// Killed, they come back on barista-2's next fetch after the connection
	// closes (500 ms here, the share fetch's wait), not when the lock runs
	// out: the bound tells the two apart without timing the next fetch.
	require.Less(t, runs[0].After, c.Lock/3, "killed: the tickets come back as soon as the connection closes, not after the lock")
	// The lock runs from the moment the broker handed the tickets out, not
	// from the freeze: barista-2 spent part of it getting its own tickets.
	require.GreaterOrEqual(t, runs[1].Taken, c.Lock-time.Second, "frozen: the tickets wait for the lock that began when they were taken")
	require.Less(t, runs[1].Taken, c.Lock+5*time.Second, "frozen: the tickets come back when that lock runs out")
	require.Less(t, runs[1].After, runs[1].Taken, "frozen: the lock began before the freeze")
	var b strings.Builder
	crash.Print(&b, runs)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "crash", b.String())
}
