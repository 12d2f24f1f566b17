package retrytopics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// The courier process (retry-topics courier) with no cluster, or whose
// fetches Kafka refuses or leaves unanswered, ends by itself, exit 1, with
// one line on stderr naming it and why: what a parent reports as its own
// line. Only the simulation injects these faults.
func TestCourierProcessFailureIsOneLine(t *testing.T) {
	bin := brewtest.BuildCmdAt(t, "../cmd/retry-topics")
	t.Setenv(brewkit.EnvTimeout, "2s") // the child inherits it
	for _, tc := range []struct {
		name  string
		fault func(*sim.Cluster)
		want  string
	}{
		{"refused", func(c *sim.Cluster) { c.FailFetches(kerr.TopicAuthorizationFailed) }, "TOPIC_AUTHORIZATION_FAILED"},
		{"unanswered", func(c *sim.Cluster) { c.Hang(kmsg.Fetch) }, brewkit.EnvTimeout + "=2s"},
		{"no cluster", nil, "no Kafka answers at 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := brewtest.Sim(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			topics := retrytopics.CourierTopics(retrytopics.DefaultDelays)
			_, err := brewkit.EnsureTopics(ctx, env.Admin(t), topics.Specs()...)
			require.NoError(t, err)
			cfg := env.Config
			if tc.fault == nil {
				cfg.Brokers = []string{"127.0.0.1:1"}
			} else {
				tc.fault(env.Sim)
			}
			c := retrytopics.Courier{Topics: topics, Group: "brew.test.courier-fails-" + strings.ReplaceAll(tc.name, " ", "-")}
			p := startCourier(ctx, t, cfg, bin, retrytopics.ChildArgs(c, "127.0.0.1:1", time.Second))
			err = p.wait(t, 10*time.Second) // it ends by itself: the test fails at the limit
			require.Error(t, err)
			msg := strings.TrimSpace(p.stderr.String())
			require.True(t, strings.HasPrefix(msg, "retry-topics courier: "), "its own line: %q", msg)
			require.Contains(t, msg, tc.want)
			require.NotContains(t, msg, "\n")
		})
	}
}
