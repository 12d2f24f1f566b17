package groups_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// A second member joins a group of one, while orders flow. Eager revokes all
// six partitions from the first member; cooperative-sticky and the consumer
// protocol revoke only the three that move. Throughout, no partition is
// processed by a member that does not own it, and the two never own the same
// partition at once.
func TestJoiningMemberRevokesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	for _, p := range groups.Protocols {
		t.Run(string(p), func(t *testing.T) {
			topic := env.FreshTopic(t, "join", 6)
			group := fmt.Sprintf("brew.test.join-%d", rand.Uint32())
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var l groups.Log
			run := func(name string) func() {
				mctx, stop := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() {
					done <- groups.Member{Name: name, Group: group, Topic: topic, Protocol: p, Work: time.Millisecond}.Run(mctx, env.Config, l.Emit)
				}()
				return func() { stop(); require.NoError(t, <-done) }
			}
			prod := env.Client(t)
			go func() {
				rng := rand.New(rand.NewPCG(3, 4))
				for i := int64(1); ctx.Err() == nil; i++ {
					prod.Produce(ctx, brewkit.NewOrder(rng, i, time.Now()).Record(topic), nil)
					time.Sleep(10 * time.Millisecond)
				}
			}()

			stopA := run("a")
			defer stopA()
			brewtest.Eventually(t, 60*time.Second, "a owns all six", func() (bool, string) {
				o := groups.Owned(l.Events(), "a")
				return len(o) == 6, fmt.Sprint(o)
			})
			stopB := run("b")
			defer stopB()
			brewtest.Eventually(t, 60*time.Second, "a and b own three each", func() (bool, string) {
				ev := l.Events()
				a, b := groups.Owned(ev, "a"), groups.Owned(ev, "b")
				return len(a) == 3 && len(b) == 3, fmt.Sprintf("a %v b %v", a, b)
			})
			time.Sleep(500 * time.Millisecond) // a few records processed under the new assignment

			ev := l.Events()
			var revokedFromA []int32
			for _, e := range ev {
				if e.Member == "a" && (e.Kind == "revoked" || e.Kind == "lost") {
					revokedFromA = append(revokedFromA, e.Partitions...)
				}
			}
			slices.Sort(revokedFromA)
			t.Logf("%s: b joined; a gave up %v and kept %v; b got %v", p, revokedFromA, groups.Owned(ev, "a"), groups.Owned(ev, "b"))
			if p == groups.Eager {
				require.Equal(t, []int32{0, 1, 2, 3, 4, 5}, revokedFromA, "eager: every partition revoked")
			} else {
				require.Equal(t, groups.Owned(ev, "b"), revokedFromA, "only the partitions that moved are revoked")
			}
			checkExclusive(t, ev)
			if p == groups.Cooperative {
				var b strings.Builder
				for _, e := range ev {
					if e.Kind != "processed" {
						b.WriteString(e.String() + "\n")
					}
				}
				brewtest.MatchesReadme(t, "../README.md", "member-join", b.String())
			}
		})
	}
}

// checkExclusive replays the events in time order: each processed record's
// member owns its partition then, and no partition has two owners at once.
func checkExclusive(t *testing.T, ev []groups.Event) {
	t.Helper()
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	owner := map[int32]string{}
	processed := 0
	for _, e := range ev {
		switch e.Kind {
		case "assigned":
			for _, p := range e.Partitions {
				if o, ok := owner[p]; ok && o != e.Member {
					t.Fatalf("%s: partition %d assigned to %s while %s owns it", e.At.Format(time.StampMicro), p, e.Member, o)
				}
				owner[p] = e.Member
			}
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if owner[p] == e.Member {
					delete(owner, p)
				}
			}
		case "processed":
			processed++
			if owner[e.Partition] != e.Member {
				t.Fatalf("%s: %s processed p%d@%d, owned by %q", e.At.Format(time.StampMicro), e.Member, e.Partition, e.Offset, owner[e.Partition])
			}
		}
	}
	require.Positive(t, processed)
}

// Under the consumer protocol a member's epoch moves with every
// reconciliation. Before Kafka 4.3 a commit sent while a heartbeat moved the
// epoch could be refused with STALE_MEMBER_EPOCH, an error the client cannot
// recover from by itself (KIP-1251); franz-go asks for 4.3+ with
// kgo.ServerSideBalancer for that reason. On the course's Kafka two members
// that commit every 100 ms keep every commit while a third joins and leaves
// three times.
func TestConsumerProtocolCommitsThroughRebalances(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t) // the coordinator's epoch check is Kafka's, not the simulation's
	topic := env.FreshTopic(t, "epochs", 6)
	group := fmt.Sprintf("brew.test.epochs-%d", rand.Uint32())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	commits, refused := 0, map[string]int{}
	// member starts a member that polls until ctx ends; the caller closes it.
	member := func(ctx context.Context) *kgo.Client {
		cl, err := brewkit.NewClient(env.Config, append(groups.Consumer.Opts(),
			kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.AutoCommitInterval(100*time.Millisecond), // franz-go's smallest
			kgo.AutoCommitCallback(func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				mu.Lock()
				defer mu.Unlock()
				if errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
					return // our own leaving member's commit, cut short by its Close: not a refusal
				}
				if err != nil {
					refused[err.Error()]++
					return
				}
				for _, tp := range resp.Topics {
					for _, p := range tp.Partitions {
						if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
							refused[e.Error()]++
						} else {
							commits++
						}
					}
				}
			}))...)
		require.NoError(t, err)
		go func() {
			for ctx.Err() == nil {
				if cl.PollFetches(ctx).IsClientClosed() {
					return
				}
			}
		}()
		return cl
	}
	prod := env.Client(t)
	go func() {
		rng := rand.New(rand.NewPCG(5, 6))
		for i := int64(1); ctx.Err() == nil; i++ {
			prod.Produce(ctx, brewkit.NewOrder(rng, i, time.Now()).Record(topic), nil)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer member(ctx).Close()
	defer member(ctx).Close()
	for range 3 {
		cctx, stop := context.WithCancel(ctx)
		c := member(cctx)
		time.Sleep(8 * time.Second) // joins, takes partitions, commits
		stop()
		c.Close() // leaves: the two take its partitions back
		time.Sleep(4 * time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d partition commits, refused: %v", commits, refused)
	require.Greater(t, commits, 200, "the members committed all along")
	require.Empty(t, refused, "no commit refused while members joined and left")
}

// A member's failure ends every wait of the log at once, with that member's
// error; the first failure is the one kept.
func TestLogWaitsEndOnAMemberFailure(t *testing.T) {
	var l groups.Log
	ctx := context.Background()
	refused := errors.New("member a: reading t partition 0: TOPIC_AUTHORIZATION_FAILED")
	time.AfterFunc(50*time.Millisecond, func() { l.Fail(refused) })
	start := time.Now()
	require.ErrorIs(t, l.WaitFor(ctx, time.Minute, 10*time.Millisecond, func() bool { return false }), refused)
	require.Less(t, time.Since(start), 5*time.Second)
	require.ErrorIs(t, l.Sleep(ctx, time.Minute), refused)
	l.Fail(errors.New("member b: later"))
	require.ErrorIs(t, l.Err(), refused)

	var ok groups.Log
	require.NoError(t, ok.WaitFor(ctx, time.Minute, 10*time.Millisecond, func() bool { return true }))
	require.NoError(t, ok.Sleep(ctx, time.Millisecond))
}

// A child process's error is the one line it wrote as it failed, not its
// exit status beside it.
func TestProcessErrorIsTheChildsLine(t *testing.T) {
	exit := errors.New("exit status 1")
	line := "member m1: reading t partition 4: TOPIC_AUTHORIZATION_FAILED: Not authorized"
	require.EqualError(t, groups.ProcessError("member m1", exit, []byte(line+"\n")), line)
	require.EqualError(t, groups.ProcessError("member m1", exit, nil), "member m1: exit status 1")
	require.EqualError(t, groups.ProcessError("member m1", nil, nil), "member m1 ended by itself")
}
