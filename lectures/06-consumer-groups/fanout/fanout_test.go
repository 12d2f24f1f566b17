package fanout_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/fanout"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Each group reads every order; the members of one group split the
// partitions between them, each partition to exactly one; with more members
// than partitions one member is idle. On every protocol.
func TestEveryGroupSeesEveryOrderReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	for _, p := range groups.Protocols {
		t.Run(string(p), func(t *testing.T) {
			if p == groups.Consumer && env.Simulated {
				t.Log("kfake implements the consumer protocol too")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := fanout.Defaults
			c.Protocol = p
			res, err := fanout.Run(ctx, env.Config, c)
			require.NoError(t, err)
			require.Len(t, res.Members, 3)
			require.Equal(t, c.Orders, res.Members[0].Read, "notifications read everything")
			require.Equal(t, []int32{0, 1, 2, 3, 4, 5}, res.Members[0].Partitions)
			a, b := res.Members[1], res.Members[2]
			require.Equal(t, c.Orders, a.Read+b.Read, "analytics read everything, once")
			require.NotEmpty(t, a.Partitions)
			require.NotEmpty(t, b.Partitions)
			all := slices.Sorted(slices.Values(append(slices.Clone(a.Partitions), b.Partitions...)))
			require.Equal(t, []int32{0, 1, 2, 3, 4, 5}, all, "each partition to exactly one analytics member")
			idle := 0
			for _, m := range res.Idle {
				if len(m.Partitions) == 0 {
					idle++
				}
			}
			require.Equal(t, 1, idle, "4 members on 3 partitions: one idle")
			if p == fanout.Defaults.Protocol {
				var out strings.Builder
				res.Print(&out)
				brewtest.MatchesReadme(t, "../README.md", "fanout", out.String())
			}
		})
	}
}
