package acls_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/acls"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// listing is kafka-acls --list's text as resource header => its entry lines
// (sorted), for the headers that mention keep.
func listing(t *testing.T, out, keep string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	header := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Current ACLs for resource `"):
			require.True(t, strings.HasSuffix(l, "`:"), "header %q", l)
			header = l
		case strings.HasPrefix(l, "\t("):
			require.NotEmpty(t, header, "an entry before any resource: %q", l)
			if strings.Contains(header, keep) {
				got[header] = append(got[header], l)
			}
		case l == "":
			header = ""
		default:
			t.Fatalf("a line kafka-acls --list does not print: %q", l)
		}
	}
	for _, ls := range got {
		slices.Sort(ls)
	}
	return got
}

// kafkaAcls runs Kafka's own kafka-acls on the stand.
func kafkaAcls(t *testing.T, env *brewtest.Env, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-acls", args...)
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kafka-acls %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// Our listing of the lecture's ACLs is kafka-acls --list's, value for
// value and line for line (resources in any order, as the tool prints
// them); `make acls-describe` prints what the README shows.
func TestDescribeIsKafkaAclsListReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	c := realCluster(t)
	n, _ := fresh(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op, _, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	defer op.Close()
	_, err = acls.Ensure(ctx, op, n.All()...)
	require.NoError(t, err)

	bs, err := acls.List(ctx, op, nil)
	require.NoError(t, err)
	var b strings.Builder
	acls.Print(&b, acls.Group(bs))
	sfx := strings.TrimPrefix(n.Partner, "partner-")
	ours := listing(t, b.String(), "acl"+sfx+".")
	theirs := listing(t, kafkaAcls(t, env, "--list"), "acl"+sfx+".")
	require.Len(t, ours, 8, "the lecture's ACLs are on 8 resource patterns")
	require.Equal(t, theirs, ours)

	var mine []acls.Binding
	for _, x := range bs {
		if strings.Contains(x.Resource.Name, "acl"+sfx+".") {
			mine = append(mine, x)
		}
	}
	b.Reset()
	acls.Print(&b, acls.Group(mine))
	out := lecture(n).Replace(b.String())
	t.Log("\n" + out)
	brewtest.MatchesReadme(t, "../README.md", "acls-describe", out)
}

// kafka-acls' --consumer and --producer shortcuts grant what the README
// says: a consumer READ and DESCRIBE on the topic and READ on the group,
// a transactional producer WRITE, DESCRIBE and CREATE on the topic and
// WRITE and DESCRIBE on its transactional id.
func TestKafkaAclsShortcuts(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	c := realCluster(t)
	sfx := fmt.Sprintf("%d", time.Now().UnixNano()%1e6)
	consumer, producer := "shortcut-consumer-"+sfx, "shortcut-producer-"+sfx
	topicName, groupName, txn := "brew.test.shortcut"+sfx, "brew.test.shortcut"+sfx+".group", "brew.test.shortcut"+sfx+".txn"
	t.Cleanup(func() { drop(t, c, acls.Names{}, consumer, producer) })
	kafkaAcls(t, env, "--add", "--allow-principal", secure.Principal(consumer), "--consumer", "--topic", topicName, "--group", groupName)
	kafkaAcls(t, env, "--add", "--allow-principal", secure.Principal(producer), "--producer", "--topic", topicName, "--transactional-id", txn)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op, _, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	defer op.Close()
	// kafka-acls created them through one broker; the describe below may go to
	// another, which learns them from the metadata log a moment later. Wait
	// until the answer holds as many ACLs as the shortcut makes, then compare
	// them exactly.
	ops := func(user string, want int) []string {
		p := secure.Principal(user)
		var out []string
		_ = brewkit.WaitFor(ctx, 15*time.Second, 100*time.Millisecond, func() bool {
			bs, err := acls.List(ctx, op, &p)
			require.NoError(t, err)
			out = out[:0]
			for _, b := range bs {
				out = append(out, fmt.Sprintf("%s %s %s %s", b.Resource.Type, b.Resource.Name, b.Operation, b.Permission))
			}
			return len(out) >= want
		})
		slices.Sort(out)
		return out
	}
	consumerACLs := []string{
		"GROUP " + groupName + " READ ALLOW",
		"TOPIC " + topicName + " DESCRIBE ALLOW",
		"TOPIC " + topicName + " READ ALLOW",
	}
	require.Equal(t, consumerACLs, ops(consumer, len(consumerACLs)))
	producerACLs := []string{
		"TOPIC " + topicName + " CREATE ALLOW",
		"TOPIC " + topicName + " DESCRIBE ALLOW",
		"TOPIC " + topicName + " WRITE ALLOW",
		"TRANSACTIONAL_ID " + txn + " DESCRIBE ALLOW",
		"TRANSACTIONAL_ID " + txn + " WRITE ALLOW",
	}
	require.Equal(t, producerACLs, ops(producer, len(producerACLs)))
}
