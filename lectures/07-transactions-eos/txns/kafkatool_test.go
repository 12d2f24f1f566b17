package txns_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txnlog"
	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

// Kafka's own console consumer agrees: with --isolation-level
// read_committed it prints exactly the committed orders, with
// read_uncommitted every order written. And kafka-transactions describes the
// transactional id with the producer id the program used.
func TestKafkasToolsAgree(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	orders, payments := env.FreshTopic(t, "txn-orders", 1), env.FreshTopic(t, "txn-payments", 1)
	c := txns.WriteConfig{ID: fmt.Sprintf("brew.test.txn.%d", rand.Uint32()%1e6), Orders: orders, Payments: payments,
		Transactions: 6, AbortEvery: 3, FirstOrder: 1}
	var outs []txns.Outcome
	require.NoError(t, txns.Write(ctx, env.Config, c, func(o txns.Outcome) { outs = append(outs, o) }))
	var committed, all []string
	for _, o := range outs {
		all = append(all, o.OrderID)
		if o.Committed {
			committed = append(committed, o.OrderID)
		}
	}
	require.Len(t, committed, 4)

	for _, topic := range []string{orders, payments} {
		require.Equal(t, committed, consoleKeys(t, env, topic, "read_committed"), "%s: kafka-console-consumer read_committed", topic)
		require.Equal(t, all, consoleKeys(t, env, topic, "read_uncommitted"), "%s: kafka-console-consumer read_uncommitted", topic)
		require.NoError(t, txnlog.Settle(ctx, env.Admin(t), topic, 10*time.Second))
		recs, err := txnlog.Read(ctx, env.Config, env.Admin(t), topic, true)
		require.NoError(t, err)
		var ours []string
		for _, r := range recs {
			if !r.Attrs.IsControl() {
				ours = append(ours, string(r.Key))
			}
		}
		require.Equal(t, committed, ours, "%s: our read_committed reader", topic)
	}

	cmd, err := env.Stand(t).Tool(ctx, "kafka-transactions", "describe", "--transactional-id", c.ID)
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kafka-transactions describe: %s", out)
	t.Logf("kafka-transactions describe:\n%s", out)
	fields := describeFields(t, string(out))
	require.Equal(t, strconv.FormatInt(outs[0].Producer, 10), fields["ProducerId"])
	require.Equal(t, strconv.Itoa(int(outs[len(outs)-1].Epoch)+1), fields["ProducerEpoch"], "transactions v2: ending the last transaction bumped the epoch once more")
	require.Equal(t, "CompleteAbort", fields["TransactionState"], "the sixth transaction was aborted")
}

// consoleKeys runs kafka-console-consumer over topic from the beginning and
// returns the keys it printed, in order.
func consoleKeys(t *testing.T, env *brewtest.Env, topic, level string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-console-consumer", "--topic", topic, "--from-beginning",
		"--isolation-level", level, "--timeout-ms", "5000",
		"--formatter-property", "print.key=true", "--formatter-property", "print.value=false")
	require.NoError(t, err)
	out, err := cmd.Output() // it ends with an error status on its timeout
	var keys []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "ord-") {
			keys = append(keys, line)
		}
	}
	require.NotEmpty(t, keys, "kafka-console-consumer printed no keys (%v):\n%s", err, out)
	return keys
}

var describeRow = regexp.MustCompile(`\s{2,}|\t`)

// describeFields reads kafka-transactions describe's header and row.
func describeFields(t *testing.T, out string) map[string]string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "ProducerId") })
	require.GreaterOrEqual(t, i, 0, "no header in:\n%s", out)
	require.Greater(t, len(lines), i+1, "no row in:\n%s", out)
	head, row := describeRow.Split(strings.TrimSpace(lines[i]), -1), describeRow.Split(strings.TrimSpace(lines[i+1]), -1)
	fields := map[string]string{}
	for j, h := range head {
		if j < len(row) {
			fields[h] = row[j]
		}
	}
	return fields
}
