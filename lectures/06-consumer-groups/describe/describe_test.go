package describe_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/describe"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Our describe of a group with two members, for the classic and the consumer
// protocol: every partition owned, everything committed; on real Kafka the
// same offsets, lag and member ids as kafka-consumer-groups --describe.
func TestDescribeMatchesKafkasToolReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	for _, p := range []groups.Protocol{groups.Cooperative, groups.Consumer} {
		t.Run(string(p), func(t *testing.T) {
			if p == groups.Consumer && env.Simulated {
				t.Skip("kfake's ConsumerGroupDescribe names topics by id only; the real tier checks the consumer protocol")
			}
			topic := env.FreshTopic(t, "describe", 3)
			group := fmt.Sprintf("brew.test.describe-%d", rand.Uint32())
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			mctx, stop := context.WithCancel(ctx)
			defer stop()
			for _, name := range []string{"a", "b"} {
				go groups.Member{Name: name, Group: group, Topic: topic, Protocol: p}.Run(mctx, env.Config, func(groups.Event) {}) //nolint:errcheck // the describe tells
			}
			var recs []*kgo.Record
			for i := range 30 {
				recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte("order")})
			}
			require.NoError(t, env.Client(t).ProduceSync(ctx, recs...).FirstErr())
			adm := env.Admin(t)
			var g describe.Group
			brewtest.Eventually(t, time.Minute, "two members own every partition, all committed", func() (bool, string) {
				var err error
				g, err = describe.Describe(ctx, adm, group)
				if err != nil {
					return false, err.Error()
				}
				members := map[string]bool{}
				for _, pt := range g.Partitions {
					if pt.MemberID == "" || pt.Lag != 0 {
						return false, fmt.Sprintf("%+v", g)
					}
					members[pt.MemberID] = true
				}
				return g.Members == 2 && len(members) == 2 && len(g.Partitions) == 3, fmt.Sprintf("%+v", g)
			})
			require.Equal(t, map[groups.Protocol]string{groups.Cooperative: "classic", groups.Consumer: "consumer"}[p], g.Protocol)
			require.Equal(t, "Stable", g.State)
			var b strings.Builder
			g.Print(&b)
			t.Log("\n" + b.String())
			if env.Simulated {
				return // no Kafka tools on the simulation
			}
			if p == groups.Cooperative {
				brewtest.MatchesReadme(t, "../README.md", "describe", b.String())
			}
			tool := kafkaConsumerGroups(t, env, group)
			for _, pt := range g.Partitions {
				row, ok := tool[pt.Partition]
				require.True(t, ok, "partition %d missing from kafka-consumer-groups", pt.Partition)
				require.Equal(t, []string{fmt.Sprint(pt.Committed), fmt.Sprint(pt.End), fmt.Sprint(pt.Lag), pt.MemberID}, row,
					"partition %d: ours vs kafka-consumer-groups (CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID)", pt.Partition)
			}
		})
	}
}

// kafkaConsumerGroups runs Kafka's own tool and returns, per partition,
// CURRENT-OFFSET, LOG-END-OFFSET, LAG and CONSUMER-ID.
func kafkaConsumerGroups(t *testing.T, env *brewtest.Env, group string) map[int32][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-consumer-groups", "--describe", "--group", group)
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err, "kafka-consumer-groups: %s", out)
	rows := map[int32][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != group {
			continue
		}
		p, err := strconv.Atoi(f[2])
		require.NoError(t, err, line)
		rows[int32(p)] = []string{f[3], f[4], f[5], f[6]}
	}
	require.NotEmpty(t, rows, "no rows for %s in:\n%s", group, out)
	return rows
}
