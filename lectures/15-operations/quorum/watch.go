package quorum

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// This file is the harness around RunDynamic: the quorum it records after
// each step, the watch for a leader that runs through the steps, and what
// it prints. The AddRaftVoter and RemoveRaftVoter steps are in dynamic.go.

// step records the quorum after the step called name, and says it.
func (r *dynamicRun) step(ctx context.Context, name string) error {
	st, err := describe(ctx, r.cl, name)
	if err != nil {
		return err
	}
	r.res.Steps = append(r.res.Steps, st)
	r.say(fmt.Sprintf("%s: voters %v, observers %v, leader %d", name, st.Voters, st.Observers, st.Leader))
	return nil
}

// describe is the quorum now, with the finalized kraft.version, as the step
// called name.
func describe(ctx context.Context, cl *kgo.Client, name string) (Step, error) {
	q, err := brewkit.DescribeQuorum(ctx, cl)
	if err != nil {
		return Step{}, err
	}
	rel, err := brewkit.ClusterRelease(ctx, cl)
	if err != nil {
		return Step{}, err
	}
	return Step{Name: name, Voters: ids(q.Voters), Observers: ids(q.Observers), Leader: q.LeaderID, KRaft: rel.Features["kraft.version"]}, nil
}

// watchLeader polls DescribeQuorum every Poll until the returned function is
// called, which reports the longest stretch without a leader (an error
// counts as none) and how many polls it made.
func watchLeader(ctx context.Context, cl *kgo.Client) func() (time.Duration, int) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		longest time.Duration
		polls   int
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var since time.Time // zero while there is a leader
		for ctx.Err() == nil {
			qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
			q, err := brewkit.DescribeQuorum(qctx, cl)
			qcancel()
			if ctx.Err() != nil {
				return
			}
			polls++
			now := time.Now()
			if err != nil || q.LeaderID < 0 {
				if since.IsZero() {
					since = now
				}
				longest = max(longest, now.Sub(since))
			} else {
				since = time.Time{}
			}
			brewkit.Sleep(ctx, Poll) //nolint:errcheck // ctx ends the loop
		}
	}()
	return func() (time.Duration, int) {
		cancel()
		wg.Wait()
		return longest, polls
	}
}

// Print writes the steps, the leader watch and the witness.
func (d Dynamic) Print(w io.Writer) {
	t := brewkit.NewTable(w, "STEP", "KRAFT.VERSION", "VOTERS", "OBSERVERS", "LEADER")
	for _, s := range d.Steps {
		t.Row(s.Name, s.KRaft, fmt.Sprint(s.Voters), fmt.Sprint(s.Observers), s.Leader)
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintf(w, "longest without a leader: %s (DescribeQuorum polls: %d, every %s)\n", d.LongestLeaderless.Round(time.Millisecond), d.Polls, Poll)
	fmt.Fprintf(w, "witness: sent %d, acknowledged %d, read %d: lost %d, duplicated %d\n",
		d.Witness.Sent, d.Witness.Acked, d.Witness.Read, d.Witness.Lost, d.Witness.Duplicated)
}
