package kitchen_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

// A kitchen the cluster does not serve stops within a few bounds and says
// why, in both modes, instead of cooking nothing for ever or calling itself
// idle with orders waiting: its reads unanswered, its writes refused, its
// writes unanswered.
func TestKitchenStopsWhenTheClusterDoesNotServeIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*sim.Cluster)
		want  string
	}{
		{"reads unanswered", func(c *sim.Cluster) { c.Hang(kmsg.Fetch) }, "has answered no fetch"},
		{"writes refused", func(c *sim.Cluster) { c.FailProduces(kerr.TopicAuthorizationFailed) }, kerr.TopicAuthorizationFailed.Message},
		{"writes unanswered", func(c *sim.Cluster) { c.Hang(kmsg.Produce) }, "2s"},
	} {
		for _, noEOS := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: ", no-eos"}[noEOS], func(t *testing.T) {
				t.Parallel()
				env := brewtest.Sim(t)
				cfg := env.Config
				cfg.Timeout = 2 * time.Second
				in, out := env.FreshTopic(t, "kitchen-orders", 3), env.FreshTopic(t, "kitchen-events", 3)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				rng := rand.New(rand.NewPCG(1, 1))
				var recs []*kgo.Record
				for n := range 20 {
					recs = append(recs, brewkit.NewOrder(rng, int64(n+1), time.Now()).Record(in))
				}
				require.NoError(t, env.Client(t).ProduceSync(ctx, recs...).FirstErr())
				tc.fault(env.Sim)

				c := kitchen.Defaults
				c.In, c.Out, c.Group, c.ID, c.NoEOS, c.Idle = in, out, in, "kitchen-"+in, noEOS, 5*time.Second
				start := time.Now()
				st, err := kitchen.Run(ctx, cfg, c, func(s string) { t.Log(s) })
				took := time.Since(start)
				t.Logf("after %s: %+v, %v", took.Round(10*time.Millisecond), st, err)
				require.ErrorContains(t, err, tc.want)
				require.Less(t, took, 10*time.Second)
			})
		}
	}
}
