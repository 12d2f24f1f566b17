package describe_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/describe"
)

// Two members of a share group on a 3-partition topic take all 30 tickets:
// the group is described with both members, every partition assigned and no
// lag; on real Kafka with the same members, start offsets and lag as
// kafka-share-groups --describe. (Kafka reports a start offset that
// trails the records already done; the lag is exact.)
func TestDescribeShareGroupReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := describe.Demo(ctx, env.Config, func(g describe.Group) error {
		if !env.Simulated {
			compareWithKafka(t, env, ctx, g)
		}
		return nil
	})
	require.NoError(t, err)
	var assigned []int32
	for _, m := range g.Members {
		assigned = append(assigned, m.Assigned...)
	}
	slices.Sort(assigned)
	require.Equal(t, []int32{0, 1, 2}, slices.Compact(assigned), "every partition assigned")
	require.Len(t, g.Partitions, 3)
	for _, p := range g.Partitions {
		require.Zero(t, p.Lag, "partition %d: every ticket done", p.Partition)
	}
	var b strings.Builder
	g.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "describe", b.String())
}

func compareWithKafka(t *testing.T, env *brewtest.Env, ctx context.Context, g describe.Group) {
	// Kafka moves a share partition's start offset by itself, after the
	// records are done (in the project's CI ours read -1 and the tool, run
	// just after, 10). So the tool is compared with our view taken just
	// before and just after it ran, and only when that view did not move; a
	// tool that disagrees with a view that stood still fails.
	adm := env.Admin(t)
	for attempt := 1; ; attempt++ {
		before, err := describe.Describe(ctx, adm, g.Name)
		require.NoError(t, err)
		cmd, err := env.Stand(t).Tool(ctx, "kafka-share-groups", "--describe", "--group", g.Name)
		require.NoError(t, err)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "kafka-share-groups --describe: %s", out)
		t.Logf("kafka-share-groups --describe:\n%s", out)
		after, err := describe.Describe(ctx, adm, g.Name)
		require.NoError(t, err)
		if !slices.Equal(before.Partitions, after.Partitions) && attempt < 5 {
			t.Logf("attempt %d: the start offsets moved while kafka-share-groups ran (%v, then %v); again", attempt, before.Partitions, after.Partitions)
			continue
		}
		rows := table(string(out))
		require.Len(t, rows, len(after.Partitions), "one row per partition")
		for _, p := range after.Partitions {
			i := slices.IndexFunc(rows, func(r map[string]string) bool { return r["PARTITION"] == strconv.Itoa(int(p.Partition)) })
			require.GreaterOrEqual(t, i, 0, "partition %d in kafka-share-groups", p.Partition)
			require.Equal(t, strconv.FormatInt(p.StartOffset, 10), rows[i]["START-OFFSET"], "partition %d", p.Partition)
			require.Equal(t, strconv.FormatInt(p.Lag, 10), rows[i]["LAG"], "partition %d", p.Partition)
		}
		break
	}

	cmd, err := env.Stand(t).Tool(ctx, "kafka-share-groups", "--describe", "--group", g.Name, "--members")
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kafka-share-groups --describe --members: %s", out)
	t.Logf("kafka-share-groups --describe --members:\n%s", out)
	members := table(string(out))
	require.Len(t, members, len(g.Members))
	for _, m := range members {
		require.True(t, slices.ContainsFunc(g.Members, func(x describe.Member) bool { return x.ID == m["CONSUMER-ID"] }), "member %s", m["CONSUMER-ID"])
	}
}

// table reads a kafka tool's table: a header line of upper-case names, then rows.
func table(out string) []map[string]string {
	var head []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "GROUP" {
			head = f
			continue
		}
		if head == nil || len(f) < len(head) {
			continue
		}
		r := map[string]string{}
		for i, h := range head {
			r[h] = f[i]
		}
		rows = append(rows, r)
	}
	return rows
}
