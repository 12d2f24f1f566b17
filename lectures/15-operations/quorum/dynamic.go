package quorum

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
	"github.com/brew-course/kafka/pkg/brewkit/witness"

	"github.com/brew-course/kafka/lectures/15-operations/lab"
)

// NewController is the controller the dynamic run adds, Replaced the one it
// removes: controller 1 is replaced by controller 4.
const (
	NewController int32 = 4
	Replaced      int32 = 1
)

// Step is the quorum after one step of the dynamic run.
type Step struct {
	Name      string  `json:"name"`
	Voters    []int32 `json:"voters"`
	Observers []int32 `json:"observers"`
	Leader    int32   `json:"leader"`
	KRaft     int16   `json:"kraft_version"`
}

// Dynamic is what the dynamic run saw.
type Dynamic struct {
	Steps []Step `json:"steps"`
	// LongestLeaderless is the longest stretch the quorum was seen without
	// a leader, polled every Poll from the first step to the last.
	LongestLeaderless time.Duration  `json:"longest_leaderless"`
	Polls             int            `json:"polls"`
	Witness           witness.Report `json:"witness"`
}

// Poll is how often the run asks DescribeQuorum for a leader.
const Poll = 200 * time.Millisecond

// RunDynamic starts a lab cluster of three brokers and controllers whose
// quorum is dynamic (formatted with --initial-controllers), writes and reads
// orders on it with a witness, starts controller 4 (formatted with
// --no-initial-controllers: an observer), adds it with AddRaftVoter, removes
// controller 1 with RemoveRaftVoter, and stops the lab.
//
// inspect, if not nil, is called with the lab's bootstrap address once the
// last step is done, before the lab stops: a test asks Kafka's own tool there.
func RunDynamic(ctx context.Context, s *stand.Stand, rate int, inspect func(ctx context.Context, bootstrap string) error, say func(string)) (res Dynamic, err error) {
	l, err := lab.New(ctx, s, 3, say)
	if err != nil {
		return res, err
	}
	defer l.Close()
	say(fmt.Sprintf("lab: formatting nodes 1-3 (broker + controller) with --initial-controllers, clients on %s-%d", lab.Addr(1), lab.ClientBase+3))
	if err := l.FormatVoters(ctx); err != nil {
		return res, err
	}
	for _, n := range l.Voters {
		if err := l.Start(ctx, n); err != nil {
			return res, err
		}
	}
	start := time.Now()
	if err := l.WaitBrokers(ctx, 2*time.Minute); err != nil {
		return res, err
	}
	say(fmt.Sprintf("lab: three brokers registered in %s", time.Since(start).Round(100*time.Millisecond)))

	cl, err := brewkit.NewClient(l.Config())
	if err != nil {
		return res, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	step := func(name string) error {
		st, err := describe(ctx, cl, name)
		if err != nil {
			return err
		}
		res.Steps = append(res.Steps, st)
		say(fmt.Sprintf("%s: voters %v, observers %v, leader %d", name, st.Voters, st.Observers, st.Leader))
		return nil
	}
	if err := waitQuorum(ctx, cl, func(q brewkit.Quorum) bool { return q.LeaderID >= 0 }); err != nil {
		return res, fmt.Errorf("the lab's quorum elected no leader: %w", err)
	}
	if err := step("formatted and started"); err != nil {
		return res, err
	}

	// The witness and the leader watch run through every change.
	topic := "brew.ops.lab-orders"
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		return res, fmt.Errorf("creating %s on the lab: %w", topic, err)
	}
	if err := brewkit.WaitTopics(ctx, adm, topic); err != nil {
		return res, err
	}
	w, err := witness.Start(ctx, l.Config(), topic, rate)
	if err != nil {
		return res, err
	}
	watch := watchLeader(ctx, cl)

	// Controller 4 starts as an observer: formatted without initial controllers.
	if err := l.Format(ctx, NewController); err != nil {
		return res, err
	}
	if err := l.Start(ctx, NewController); err != nil {
		return res, err
	}
	if err := waitQuorum(ctx, cl, func(q brewkit.Quorum) bool { return slices.Contains(ids(q.Observers), NewController) }); err != nil {
		return res, fmt.Errorf("controller 4 never fetched from the quorum; its log ends:\n%s", l.Log(NewController))
	}
	// The leader asks a new voter's ApiVersions before it adds it: wait
	// until controller 4 answers on its listener, not only fetches.
	if err := answers(ctx, lab.ControllerAddr(NewController)); err != nil {
		return res, fmt.Errorf("controller 4 does not answer on %s: %w; its log ends:\n%s", lab.ControllerAddr(NewController), err, l.Log(NewController))
	}
	if err := step("controller 4 started"); err != nil {
		return res, err
	}

	// AddRaftVoter names the replica by id and by the directory id its
	// storage was formatted with, which DescribeQuorum shows. The leader
	// refuses a replica lagging behind the log, so the run waits for
	// controller 4 to catch up, and asks again if the log ran ahead.
	var dir4 [16]byte
	if err := waitQuorum(ctx, cl, func(q brewkit.Quorum) bool {
		for _, o := range q.Observers {
			if o.ID == NewController {
				dir4 = o.Directory
				return o.LogEndOffset >= q.HighWatermark && time.Since(o.LastCaughtUp) < time.Second
			}
		}
		return false
	}); err != nil {
		return res, fmt.Errorf("controller 4 never caught up with the metadata log: %w", err)
	}
	for try := 1; ; try++ {
		err := addRaftVoter(ctx, cl, NewController, dir4)
		if err == nil {
			break
		}
		if try == 5 || !errors.Is(err, kerr.RequestTimedOut) {
			return res, fmt.Errorf("AddRaftVoter(4): %w", err)
		}
		say(fmt.Sprintf("AddRaftVoter(4): %v; asking again", err))
		if err := brewkit.Sleep(ctx, time.Second); err != nil {
			return res, err
		}
	}
	if err := waitQuorum(ctx, cl, func(q brewkit.Quorum) bool { return len(q.Voters) == 4 }); err != nil {
		return res, fmt.Errorf("controller 4 accepted but not among the voters: %w", err)
	}
	if err := step("AddRaftVoter(4)"); err != nil {
		return res, err
	}

	q, err := brewkit.DescribeQuorum(ctx, cl)
	if err != nil {
		return res, err
	}
	i := slices.IndexFunc(q.Voters, func(v brewkit.Voter) bool { return v.ID == Replaced })
	if i < 0 {
		return res, fmt.Errorf("controller 1 is not a voter: %v", ids(q.Voters))
	}
	if err := removeRaftVoter(ctx, cl, Replaced, q.Voters[i].Directory); err != nil {
		return res, fmt.Errorf("RemoveRaftVoter(1): %w", err)
	}
	if err := waitQuorum(ctx, cl, func(q brewkit.Quorum) bool {
		// Node 1 stays a broker: it goes on fetching the log, as an
		// observer (of a new leader, if it led: that one must hear from it).
		return len(q.Voters) == 3 && !slices.Contains(ids(q.Voters), Replaced) && q.LeaderID >= 0 &&
			slices.Contains(ids(q.Observers), Replaced)
	}); err != nil {
		return res, fmt.Errorf("controller 1 still a voter after RemoveRaftVoter: %w", err)
	}
	if err := step("RemoveRaftVoter(1)"); err != nil {
		return res, err
	}
	res.LongestLeaderless, res.Polls = watch()
	res.Witness = w.Stop(time.Minute)
	if inspect != nil {
		if err := inspect(ctx, l.Config().Bootstrap()); err != nil {
			return res, err
		}
	}
	say("witness: " + res.Witness.String())
	return res, nil
}

// answers waits up to a minute for ApiVersions to be answered at addr.
func answers(ctx context.Context, addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	var last error
	err = brewkit.WaitFor(ctx, time.Minute, 500*time.Millisecond, func() bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, last = kmsg.NewPtrApiVersionsRequest().RequestWith(rctx, cl)
		return last == nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

func ids(vs []brewkit.Voter) []int32 {
	var out []int32
	for _, v := range vs {
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

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

// waitQuorum waits up to a minute for DescribeQuorum to satisfy ok.
func waitQuorum(ctx context.Context, cl *kgo.Client, ok func(brewkit.Quorum) bool) error {
	return brewkit.WaitFor(ctx, time.Minute, 250*time.Millisecond, func() bool {
		q, err := brewkit.DescribeQuorum(ctx, cl)
		return err == nil && ok(q)
	})
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

// addRaftVoter asks the quorum to take node n, whose controller listens on
// lab.ControllerAddr(n), as a voter, as kafka-metadata-quorum add-controller
// does.
func addRaftVoter(ctx context.Context, cl *kgo.Client, n int32, dir [16]byte) error {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.TimeoutMillis = 30_000
	req.VoterID, req.VoterDirectoryID = n, dir
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(lab.ControllerBase+n)
	req.Listeners = append(req.Listeners, l)
	req.AckWhenCommitted = true
	rctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl)
	if err != nil {
		return err
	}
	return withMessage(resp.ErrorCode, resp.ErrorMessage)
}

// removeRaftVoter asks the quorum to drop voter n, as
// kafka-metadata-quorum remove-controller does.
func removeRaftVoter(ctx context.Context, cl *kgo.Client, n int32, dir [16]byte) error {
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = n, dir
	rctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl)
	if err != nil {
		return err
	}
	return withMessage(resp.ErrorCode, resp.ErrorMessage)
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
