package groups_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// A second member joins a group of one, while orders flow. Eager revokes all
// six partitions from the first member; cooperative-sticky and the consumer
// protocol revoke only the three that move. Throughout, no partition is
// processed by a member that does not own it, and the two never own the same
// partition at once.
func TestJoiningMemberRevokes(t *testing.T) {
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
