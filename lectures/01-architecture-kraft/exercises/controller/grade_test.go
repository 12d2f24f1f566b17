package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	// calls: a broker names a random live broker as "the controller" in
	// metadata, so one call in three would agree by chance; twenty never do.
	calls = 20

	leaderHint = "the Controller field of a broker's metadata answer is only a node that forwards to the controller, picked at random; " +
		"the active controller is the Raft leader of __cluster_metadata, which only DescribeQuorum tells (lecture 01: the trap)"
	votersHint = "the voters are the quorum's CurrentVoters in DescribeQuorum's answer: the configured members of the Raft quorum"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	admin := env.Client(t)

	// quorum is the quorum's own answer; the stand lock the grader holds
	// keeps nodes from stopping, but an election may still happen.
	quorum := func() brewkit.Quorum {
		q, err := brewkit.DescribeQuorum(ctx, admin)
		if err != nil {
			t.Fatalf("asking the quorum: %v", err)
		}
		return q
	}
	for i := 1; i <= calls; i++ {
		before := quorum()
		cl := env.Client(t) // a new client: no metadata cached from the last call
		var leader int32
		var voters []int32
		var err error
		bounded(t, ctx, 10*time.Second, leaderHint, "Controller", func(ctx context.Context) { leader, voters, err = Controller(ctx, cl) })
		cl.Close()
		grade.Failed(t, err, "DescribeQuorum on __cluster_metadata partition 0 answers who leads and who votes", "Controller returned an error")
		after := quorum()
		if before.LeaderEpoch != after.LeaderEpoch {
			i-- // an election during the call: ask again
			continue
		}
		if leader != after.LeaderID {
			grade.Fail(t, leaderHint, "call %d of %d: Controller said node %d is the active controller; the quorum says its leader is node %d",
				i, calls, leader, after.LeaderID)
		}
		want := slices.Sorted(slices.Values(after.VoterIDs()))
		if !slices.Equal(voters, want) {
			grade.Fail(t, votersHint, "call %d of %d: Controller said the voters are %v; the quorum says %v (sorted)", i, calls, voters, want)
		}
	}
}

// bounded calls f with a context that ends after limit, and fails the
// grading when f has not returned shortly after: code that ignores its
// context must not hang the grader.
func bounded(t *testing.T, parent context.Context, limit time.Duration, hint, what string, f func(context.Context)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	select {
	case <-done:
	case <-time.After(limit + 2*time.Second):
		grade.Fail(t, hint, "%s did not return within %s", what, limit)
	}
}
