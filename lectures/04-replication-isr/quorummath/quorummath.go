// Package quorummath holds the lecture's 2N+1 argument: how many failures a
// majority vote survives, and a live check that the stand's Raft quorum stops
// electing without a majority and recovers when one comes back.
package quorummath

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Row is one cluster size.
type Row struct {
	Nodes    int
	Majority int // votes needed to elect a leader or commit a record
	Survives int // nodes that may fail with a majority still up
}

// Rows computes cluster sizes 1..n.
func Rows(n int) []Row {
	rows := make([]Row, 0, n)
	for i := 1; i <= n; i++ {
		rows = append(rows, Row{Nodes: i, Majority: i/2 + 1, Survives: (i - 1) / 2})
	}
	return rows
}

// Note says what a cluster size teaches.
func (r Row) Note() string {
	switch {
	case r.Nodes == 1:
		return "a single point of failure"
	case r.Nodes == 2:
		return "needs both votes: survives nothing, and a split leaves no majority on either side"
	case r.Nodes%2 == 0:
		return fmt.Sprintf("no better than %d nodes, one more machine to fail", r.Nodes-1)
	default:
		return fmt.Sprintf("2N+1 with N=%d", r.Survives)
	}
}

// PrintTable writes the rows.
func PrintTable(w io.Writer, rows []Row) {
	t := brewkit.NewTable(w, "NODES", "MAJORITY", "FAILURES SURVIVED", "NOTE")
	for _, r := range rows {
		t.Row(r.Nodes, r.Majority, r.Survives, r.Note())
	}
	t.Flush()
}

// Live is what the live check saw.
type Live struct {
	Stopped      []int  `json:"stopped"`
	LeaderBefore int32  `json:"leader_before"`
	NoMajority   string `json:"no_majority"` // what DescribeQuorum said with two voters down
	// SteppedDownAfter is how long the last voter kept answering as leader
	// after it lost its majority.
	SteppedDownAfter time.Duration `json:"stepped_down_after"`
	LeaderOneBack    int32         `json:"leader_one_back"`
	RecoveredAfter   time.Duration `json:"recovered_after"` // from starting one node until a leader answered
	Simulated        bool          `json:"simulated"`
}

// RunLive stops two of the three voters, asks DescribeQuorum, starts one
// again and waits for a leader, then starts the other.
func RunLive(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Live, error) {
	var lv Live
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return lv, err
	}
	defer cl.Close()
	if lv.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return lv, err
	}
	q, err := brewkit.DescribeQuorum(ctx, cl)
	if err != nil {
		return lv, err
	}
	lv.LeaderBefore = q.LeaderID
	say(fmt.Sprintf("quorum leader: node %d of voters %v", q.LeaderID, q.VoterIDs()))

	// Keep one voter up; on the simulation it must be its fixed controller.
	keep := q.LeaderID
	if lv.Simulated {
		keep = brewkit.SimulatedController
	}
	for _, n := range []int{1, 2, 3} {
		if int32(n) != keep {
			lv.Stopped = append(lv.Stopped, n)
		}
	}
	for _, n := range lv.Stopped {
		say(fmt.Sprintf("stopping node %d", n))
		if err := nodes.StopNode(ctx, n, false); err != nil {
			return lv, err
		}
	}
	if err := waitNoLeader(ctx, cl, &lv); err != nil {
		return lv, err
	}
	say(fmt.Sprintf("one voter of three up: no quorum leader, %s after the second stop", lv.SteppedDownAfter.Round(time.Millisecond)))

	back := lv.Stopped[0]
	say(fmt.Sprintf("starting node %d", back))
	start := time.Now()
	if err := nodes.StartNode(ctx, back); err != nil {
		return lv, err
	}
	lv.LeaderOneBack = -1
	var qerr error
	waited := brewkit.WaitFor(ctx, 60*time.Second, 200*time.Millisecond, func() bool {
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		q, qerr = brewkit.DescribeQuorum(qctx, cl)
		if qerr == nil && q.LeaderID >= 0 {
			lv.LeaderOneBack, lv.RecoveredAfter = q.LeaderID, time.Since(start)
			return true
		}
		return false
	})
	switch {
	case ctx.Err() != nil:
		return lv, ctx.Err()
	case waited != nil:
		return lv, fmt.Errorf("no quorum leader within 60 s of starting node %d", back)
	}
	say(fmt.Sprintf("two voters of three up: leader node %d, %s after starting node %d", lv.LeaderOneBack, lv.RecoveredAfter.Round(time.Millisecond), back))
	say(fmt.Sprintf("starting node %d", lv.Stopped[1]))
	if err := nodes.StartNode(ctx, lv.Stopped[1]); err != nil {
		return lv, err
	}
	return lv, nil
}

// waitNoLeader asks DescribeQuorum until no leader answers (at most 30 s)
// and notes how long that took and what the question got. A leader that
// loses its majority does not know it at once: it steps down when no
// majority has fetched from it for a while (check quorum).
func waitNoLeader(ctx context.Context, cl *kgo.Client, lv *Live) error {
	lostAt := time.Now()
	var asked time.Time
	var q brewkit.Quorum
	var qerr error
	waited := brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
		asked = time.Now()
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		q, qerr = brewkit.DescribeQuorum(qctx, cl)
		return qerr != nil || q.LeaderID < 0
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case waited != nil:
		return fmt.Errorf("node %d still leads 30 s after losing its majority", q.LeaderID)
	}
	lv.SteppedDownAfter = asked.Sub(lostAt) // the first question no leader answered
	if qerr != nil {
		lv.NoMajority = "DescribeQuorum failed: " + qerr.Error()
	} else {
		lv.NoMajority = "DescribeQuorum: no leader"
	}
	return nil
}
