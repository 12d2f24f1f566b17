// Package quorum looks at the controllers' Raft quorum the way an operator
// replacing a controller must: who votes and who only follows (observers),
// whether the quorum is static (its voters fixed in every node's
// controller.quorum.voters, kraft.version 0) or dynamic (KIP-853,
// kraft.version 1: voters added and removed with AddRaftVoter and
// RemoveRaftVoter), and what the cluster answers when asked to change its
// voters. On a static quorum that answer is a refusal, which changes
// nothing; on a dynamic one the program does not ask (it would change it).
package quorum

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Result is what the program saw.
type Result struct {
	Quorum       brewkit.Quorum
	KRaft        int16  // the finalized kraft.version
	Dynamic      bool   // kraft.version 1
	AddAnswer    string // what AddRaftVoter answered for a new voter 4 ("": not asked)
	RemoveAsked  int32  // the voter RemoveRaftVoter was asked to remove (0: not asked)
	RemoveAnswer string
	Table        []Size
}

// Size is one row of the quorum-size table.
type Size struct {
	Voters    int
	Majority  int
	Tolerates int // voters that may fail with the quorum still electing and committing
}

// Sizes is the table for 1 to 5 voters: an even count adds a vote to wait
// for and no failure to survive.
func Sizes() []Size {
	var t []Size
	for n := 1; n <= 5; n++ {
		t = append(t, Size{n, n/2 + 1, n - (n/2 + 1)})
	}
	return t
}

// Run describes the quorum and, on a static one, asks to change it.
func Run(ctx context.Context, cfg brewkit.Config) (Result, error) {
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	res := Result{Table: Sizes()}
	if res.Quorum, err = brewkit.DescribeQuorum(ctx, cl); err != nil {
		return res, err
	}
	rel, err := brewkit.ClusterRelease(ctx, cl)
	if err != nil {
		return res, err
	}
	res.KRaft = rel.Features["kraft.version"]
	res.Dynamic = res.KRaft >= 1
	if res.Dynamic {
		return res, nil // asking would change the quorum
	}
	res.AddAnswer = answer(untilSettled(ctx, func() error { return addVoter(ctx, cl) }))
	last := res.Quorum.Voters[len(res.Quorum.Voters)-1]
	res.RemoveAsked = last.ID
	res.RemoveAnswer = answer(untilSettled(ctx, func() error { return removeVoter(ctx, cl, last) }))
	return res, nil
}

// untilSettled asks again, for at most 15 s, while the answer is one a
// quorum gives while it settles (just after the stand starts, a broker may
// forward the request to a controller that has just lost the leadership:
// NOT_LEADER_FOR_PARTITION), so that the answer shown is the quorum's own.
func untilSettled(ctx context.Context, ask func() error) error {
	var err error
	_ = brewkit.WaitFor(ctx, 15*time.Second, 500*time.Millisecond, func() bool {
		err = ask()
		return !kerr.IsRetriable(err)
	})
	return err
}

// addVoter asks the quorum to take node 4 as a voter on 127.0.0.1:39096,
// with a directory id of its own, as kafka-metadata-quorum add-controller
// would send it.
func addVoter(ctx context.Context, cl *kgo.Client) error {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.ClusterID = kmsg.StringPtr(brewkit.ClusterID)
	req.TimeoutMillis = 10_000
	req.VoterID = 4
	rand.Read(req.VoterDirectoryID[:]) //nolint:errcheck // never fails
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", 39096
	req.Listeners = append(req.Listeners, l)
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl)
	if err != nil {
		return err
	}
	return withMessage(resp.ErrorCode, resp.ErrorMessage)
}

// removeVoter asks the quorum to drop voter v.
func removeVoter(ctx context.Context, cl *kgo.Client, v brewkit.Voter) error {
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.ClusterID = kmsg.StringPtr(brewkit.ClusterID)
	req.VoterID = v.ID
	req.VoterDirectoryID = v.Directory
	if req.VoterDirectoryID == ([16]byte{}) { // a static quorum does not know it; the request needs one
		rand.Read(req.VoterDirectoryID[:]) //nolint:errcheck // never fails
	}
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl)
	if err != nil {
		return err
	}
	return withMessage(resp.ErrorCode, resp.ErrorMessage)
}

func withMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil || msg == nil || *msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, *msg)
}

func answer(err error) string {
	var ke *kerr.Error
	switch {
	case err == nil:
		return "accepted"
	case errors.As(err, &ke):
		return err.Error()
	default:
		return "no answer: " + err.Error()
	}
}

// Print writes the quorum, its kind, the answers and the table.
func (r Result) Print(w io.Writer) {
	q := r.Quorum
	fmt.Fprintf(w, "leader %d, epoch %d, high watermark %d\n", q.LeaderID, q.LeaderEpoch, q.HighWatermark)
	t := brewkit.NewTable(w, "NODE", "ROLE", "LOG END", "LAG", "CAUGHT UP")
	row := func(v brewkit.Voter, role string) {
		caught := "-"
		if !v.LastCaughtUp.IsZero() {
			caught = fmt.Sprintf("%s ago", time.Since(v.LastCaughtUp).Round(time.Millisecond))
		}
		if v.ID == q.LeaderID {
			role = "leader"
		}
		t.Row(v.ID, role, v.LogEndOffset, max(q.HighWatermark-v.LogEndOffset, 0), caught)
	}
	for _, v := range q.Voters {
		row(v, "voter")
	}
	obs := slices.Clone(q.Observers)
	slices.SortFunc(obs, func(a, b brewkit.Voter) int { return int(a.ID - b.ID) })
	for _, v := range obs {
		row(v, "observer")
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintln(w)
	if r.Dynamic {
		fmt.Fprintf(w, "kraft.version %d: a dynamic quorum (KIP-853); voters change with AddRaftVoter and RemoveRaftVoter\n", r.KRaft)
		fmt.Fprintln(w, "(this program asks nothing of a dynamic quorum: its questions would change it)")
	} else {
		fmt.Fprintf(w, "kraft.version %d: a static quorum, its voters fixed in every node's controller.quorum.voters\n", r.KRaft)
		fmt.Fprintf(w, "AddRaftVoter(node 4, CONTROLLER://127.0.0.1:39096): %s\n", r.AddAnswer)
		fmt.Fprintf(w, "RemoveRaftVoter(node %d): %s\n", r.RemoveAsked, r.RemoveAnswer)
	}
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "VOTERS", "MAJORITY", "SURVIVES")
	for _, s := range r.Table {
		t.Row(s.Voters, s.Majority, fmt.Sprintf("%d failed", s.Tolerates))
	}
	t.Flush() //nolint:errcheck // a writer of ours
}
