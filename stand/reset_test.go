package stand_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/steps"
)

// make reset-lecture: lecture 06's topics and consumer groups and lecture
// 08's topics and share groups (with the group config lecture 08 sets) go;
// a topic of no lecture stays.
func TestResetLectureLeavesNothingOfTheLectureAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t) // share groups with group configs: Kafka 4.2's, not the simulation's
	env.Exclusive(t)   // reset deletes every topic and group of lectures 06 and 08, other tests' too
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := env.Client(t)
	adm := kadm.NewClient(cl)
	n := rand.Uint32()
	fanout := fmt.Sprintf("brew.fanout.reset-%d", n)
	tickets := fmt.Sprintf("brew.tickets.reset-%d", n)
	keep := env.FreshTopic(t, "keep", 1)
	for _, topic := range []string{fanout, tickets} {
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: topic, Partitions: 1, RF: 3, Retention: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("latte")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// A consumer group that committed, and a share group with a config
	// that acknowledged a record.
	consumer := env.Client(t, kgo.ConsumerGroup(fanout), kgo.ConsumeTopics(fanout), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	brewtest.Eventually(t, 30*time.Second, "the consumer group reads its record", func() (bool, string) {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		defer pcancel()
		return consumer.PollFetches(pctx).NumRecords() > 0, "nothing yet"
	})
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	consumer.Close()
	if err := brewkit.SetGroupConfigs(ctx, cl, tickets, map[string]string{"share.auto.offset.reset": "earliest"}); err != nil {
		t.Fatal(err)
	}
	share := env.Client(t, kgo.ShareGroup(tickets), kgo.ConsumeTopics(tickets))
	brewtest.Eventually(t, 30*time.Second, "the share group reads its record", func() (bool, string) {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		defer pcancel()
		return share.PollFetches(pctx).NumRecords() > 0, "nothing yet"
	})
	share.Close()
	brewtest.Eventually(t, 30*time.Second, "both groups listed and empty", func() (bool, string) {
		listed, err := adm.ListGroups(ctx)
		g1, g2 := listed[fanout], listed[tickets]
		return err == nil && g1.State == "Empty" && g2.State == "Empty", fmt.Sprintf("%+v %+v %v", g1, g2, err)
	})
	if got := mustGroupConfigs(t, ctx, cl, tickets); !slices.Contains(got, "share.auto.offset.reset") {
		t.Fatalf("the share group has no config to reset: %v", got)
	}

	for _, dir := range []string{"06-consumer-groups", "08-share-groups"} {
		l, err := steps.Read("../lectures/" + dir + "/" + steps.File)
		if err != nil {
			t.Fatal(err)
		}
		topics, groups, err := steps.Reset(ctx, cl, l)
		if err != nil {
			t.Fatalf("reset %s: %v", dir, err)
		}
		t.Logf("reset %s: groups %v, topics %v", dir, groups, topics)
	}

	brewtest.Eventually(t, 30*time.Second, "no topic or group of the lectures left, the other topic kept", func() (bool, string) {
		td, err := adm.ListTopics(ctx)
		if err != nil {
			return false, err.Error()
		}
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return false, err.Error()
		}
		_, g1 := listed[fanout]
		_, g2 := listed[tickets]
		ok := !td.Has(fanout) && !td.Has(tickets) && td.Has(keep) && !g1 && !g2
		return ok, fmt.Sprintf("topics %v, groups %v", td.Names(), listed.Groups())
	})
	if got := mustGroupConfigs(t, ctx, cl, tickets); len(got) > 0 {
		t.Errorf("the share group's configs outlived the reset: %v", got)
	}
}

func mustGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string) []string {
	t.Helper()
	keys, err := brewkit.GroupConfigs(ctx, cl, group)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// make reset-lecture on lecture 12's users: their ACLs, client quotas and
// SCRAM passwords go; a user the patterns do not match keeps all three.
func TestResetLectureDeletesItsUsersACLsAndQuotas(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t) // the stand's StandardAuthorizer and SCRAM store
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := env.Client(t)
	adm := kadm.NewClient(cl)
	prefix := fmt.Sprintf("reset-%d-", rand.Uint32())
	gone, kept := prefix+"partner", fmt.Sprintf("kept-%d", rand.Uint32())
	for _, u := range []string{gone, kept} {
		if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: u, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "x"}}); err != nil {
			t.Fatal(err)
		}
		acl := kadm.NewACLs().Allow("User:" + u).Topics("brew.shipments.v1").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
		if _, err := adm.CreateACLs(ctx, acl); err != nil {
			t.Fatal(err)
		}
		name := u
		q := kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &name}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1 << 20}}}
		if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{q}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { steps.ResetUsers(context.Background(), cl, steps.Lecture{Users: []string{kept}}) }) //nolint:errcheck // best effort
	has := func(u string) (scram, acl, quota bool) {
		s, err := adm.DescribeUserSCRAMs(ctx, u)
		scram = err == nil && s[u].Err == nil && len(s[u].CredInfos) > 0
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		req.Principal = kmsg.StringPtr("User:" + u)
		if resp, err := req.RequestWith(ctx, cl); err == nil && resp.ErrorCode == 0 {
			acl = len(resp.Resources) > 0
		}
		name := u
		q, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &name}})
		quota = err == nil && len(q) > 0
		return
	}

	// What was just written, each broker applies from the metadata log a
	// moment later; the reset lists what the broker it asks has.
	brewtest.Eventually(t, 20*time.Second, "both users' SCRAM credentials, ACLs and quotas listed", func() (bool, string) {
		gs, ga, gq := has(gone)
		ks, ka, kq := has(kept)
		return gs && ga && gq && ks && ka && kq, fmt.Sprintf("%s: scram %v acl %v quota %v; %s: scram %v acl %v quota %v", gone, gs, ga, gq, kept, ks, ka, kq)
	})
	users, err := steps.ResetUsers(ctx, cl, steps.Lecture{Users: []string{prefix + "*"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(users, []string{gone}) {
		t.Fatalf("reset found %v, want [%s]", users, gone)
	}
	brewtest.Eventually(t, 20*time.Second, "the matched user has nothing left, the other keeps everything", func() (bool, string) {
		gs, ga, gq := has(gone)
		ks, ka, kq := has(kept)
		return !gs && !ga && !gq && ks && ka && kq, fmt.Sprintf("%s: scram %v acl %v quota %v; %s: scram %v acl %v quota %v", gone, gs, ga, gq, kept, ks, ka, kq)
	})
}
