package backpressure_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/10-processing-failures/backpressure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// A courier process with no cluster, or whose fetches Kafka refuses or leaves
// unanswered, ends by itself within its KAFKA_TIMEOUT with one line naming it
// and why; the
// parent's error is that line, which its program's one line holds (the
// fault matrix runs backpressure and shutdown so). Only the simulation
// injects these faults.
func TestCourierProcessFailureIsItsOneLine(t *testing.T) {
	bin := brewtest.BuildCmdAt(t, "../cmd/backpressure")
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
			topic := env.FreshTopic(t, "courier-fails", 2)
			cfg := env.Config
			if tc.fault == nil {
				cfg.Brokers = []string{"127.0.0.1:1"}
			} else {
				tc.fault(env.Sim)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := backpressure.Courier{Topic: topic, Group: "brew.test.courier-fails-" + tc.name, Workers: 1, Queue: 8, Low: 2,
				CommitEvery: 100 * time.Millisecond, SampleEvery: 100 * time.Millisecond}
			p, err := backpressure.Start(ctx, cfg, []string{bin, "courier"}, c, "127.0.0.1:1")
			require.NoError(t, err)
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the courier process did not end by itself")
			}
			_, err = p.Wait(20 * time.Second)
			require.Error(t, err)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "backpressure courier: "), "the child's own line: %q", msg)
			require.Contains(t, msg, tc.want)
			require.NotContains(t, msg, "\n")
			for range 20 { // the demos ask so once it has ended: Wait(0)
				_, err := p.Wait(0)
				require.EqualError(t, err, msg)
			}
		})
	}
}
