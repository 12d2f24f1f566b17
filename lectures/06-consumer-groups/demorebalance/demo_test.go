package demorebalance_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/demorebalance"
)

// syncBuffer is written by the members' readers and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// m1, m2, m3 join one after another and m2 leaves: after each step every
// partition has one owner among the live members, shared evenly.
func TestDemoRebalanceReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := demorebalance.Defaults
	c.Member = []string{brewtest.BuildCmdAt(t, "../cmd/demo-rebalance"), "member"}
	c.Hold, c.Rate, c.Work = 500*time.Millisecond, 20, 2*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out syncBuffer
	steps, err := demorebalance.Run(ctx, env.Config, c, &out)
	require.NoError(t, err, out.b.String())
	t.Log("\n" + out.b.String())

	want := []map[string]int{{"m1": 6}, {"m1": 3, "m2": 3}, {"m1": 2, "m2": 2, "m3": 2}, {"m1": 3, "m3": 3}}
	require.Len(t, steps, len(want))
	for i, st := range steps {
		got := map[string]int{}
		for m, ps := range st.Owners {
			got[m] = len(ps)
		}
		require.Equal(t, want[i], got, "after %q", st.Title)
	}
	brewtest.MatchesReadme(t, "../README.md", "demo-rebalance", out.b.String())
}
