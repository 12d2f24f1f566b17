package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/15-operations/witness"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

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
	r := &dynamicRun{l: l, res: &res, say: say}
	if err := r.startVoters(ctx); err != nil {
		return res, err
	}
	if r.cl, err = brewkit.NewClient(l.Config()); err != nil {
		return res, err
	}
	defer r.cl.Close()
	if err := waitQuorum(ctx, r.cl, func(q brewkit.Quorum) bool { return q.LeaderID >= 0 }); err != nil {
		return res, fmt.Errorf("the lab's quorum elected no leader: %w", err)
	}
	if err := r.step(ctx, "formatted and started"); err != nil {
		return res, err
	}

	// The witness and the leader watch run through every change.
	w, err := r.startWitness(ctx, rate)
	if err != nil {
		return res, err
	}
	watch := watchLeader(ctx, r.cl)

	// Controller 4 starts as an observer: formatted without initial controllers.
	if err := r.startObserver(ctx); err != nil {
		return res, err
	}
	if err := r.step(ctx, "controller 4 started"); err != nil {
		return res, err
	}
	if err := r.addController(ctx); err != nil {
		return res, err
	}
	if err := r.step(ctx, "AddRaftVoter(4)"); err != nil {
		return res, err
	}
	if err := r.removeController(ctx); err != nil {
		return res, err
	}
	if err := r.step(ctx, "RemoveRaftVoter(1)"); err != nil {
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

// dynamicRun is what one RunDynamic's steps share: the lab, a client of its
// brokers, and what the run saw.
type dynamicRun struct {
	l   *lab.Lab
	cl  *kgo.Client
	res *Dynamic
	say func(string)
}

// startVoters formats nodes 1-3 together, each with the same
// --initial-controllers list (the three of them, with their directory ids),
// starts them, and waits until they are registered brokers.
func (r *dynamicRun) startVoters(ctx context.Context) error {
	r.say(fmt.Sprintf("lab: formatting nodes 1-3 (broker + controller) with --initial-controllers, clients on %s-%d", lab.Addr(1), lab.ClientBase+3))
	if err := r.l.FormatVoters(ctx); err != nil {
		return err
	}
	for _, n := range r.l.Voters {
		if err := r.l.Start(ctx, n); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := r.l.WaitBrokers(ctx, 2*time.Minute); err != nil {
		return err
	}
	r.say(fmt.Sprintf("lab: three brokers registered in %s", time.Since(start).Round(100*time.Millisecond)))
	return nil
}

// startWitness creates the witness' topic on the lab, three partitions of
// three replicas, and starts the witness writing rate orders a second to it
// and reading them back.
func (r *dynamicRun) startWitness(ctx context.Context, rate int) (*witness.Witness, error) {
	adm := kadm.NewClient(r.cl)
	topic := "brew.ops.lab-orders"
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		return nil, fmt.Errorf("creating %s on the lab: %w", topic, err)
	}
	if err := brewkit.WaitTopics(ctx, adm, topic); err != nil {
		return nil, err
	}
	return witness.Start(ctx, r.l.Config(), topic, rate)
}

// startObserver formats controller 4 with --no-initial-controllers and
// starts it, and waits until it fetches the metadata log as an observer and
// answers on its controller listener.
func (r *dynamicRun) startObserver(ctx context.Context) error {
	if err := r.l.Format(ctx, NewController); err != nil {
		return err
	}
	if err := r.l.Start(ctx, NewController); err != nil {
		return err
	}
	if err := waitQuorum(ctx, r.cl, func(q brewkit.Quorum) bool { return slices.Contains(ids(q.Observers), NewController) }); err != nil {
		return fmt.Errorf("controller 4 never fetched from the quorum; its log ends:\n%s", r.l.Log(NewController))
	}
	// The leader asks a new voter's ApiVersions before it adds it: wait
	// until controller 4 answers on its listener, not only fetches.
	if err := answers(ctx, lab.ControllerAddr(NewController)); err != nil {
		return fmt.Errorf("controller 4 does not answer on %s: %w; its log ends:\n%s", lab.ControllerAddr(NewController), err, r.l.Log(NewController))
	}
	return nil
}

// addController makes controller 4 a voter, as kafka-metadata-quorum
// add-controller does, and waits until the quorum has four voters.
//
// AddRaftVoter names the replica by id and by the directory id its storage
// was formatted with, which DescribeQuorum shows. The leader refuses a
// replica lagging behind the log, so the run waits for controller 4 to
// catch up, and asks again if the log ran ahead.
func (r *dynamicRun) addController(ctx context.Context) error {
	var dir [16]byte
	if err := waitQuorum(ctx, r.cl, func(q brewkit.Quorum) bool {
		for _, o := range q.Observers {
			if o.ID == NewController {
				dir = o.Directory
				return o.LogEndOffset >= q.HighWatermark && time.Since(o.LastCaughtUp) < time.Second
			}
		}
		return false
	}); err != nil {
		return fmt.Errorf("controller 4 never caught up with the metadata log: %w", err)
	}
	if err := r.ask(ctx, "AddRaftVoter(4)", func() error { return addRaftVoter(ctx, r.cl, NewController, dir) }); err != nil {
		return err
	}
	if err := waitQuorum(ctx, r.cl, func(q brewkit.Quorum) bool { return len(q.Voters) == 4 }); err != nil {
		return fmt.Errorf("controller 4 accepted but not among the voters: %w", err)
	}
	return nil
}

// removeController takes controller 1 out of the voters, by id and
// directory id as DescribeQuorum shows them, and waits until the quorum has
// three voters without it and a leader.
func (r *dynamicRun) removeController(ctx context.Context) error {
	q, err := brewkit.DescribeQuorum(ctx, r.cl)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(q.Voters, func(v brewkit.Voter) bool { return v.ID == Replaced })
	if i < 0 {
		return fmt.Errorf("controller 1 is not a voter: %v", ids(q.Voters))
	}
	dir, first := q.Voters[i].Directory, true
	if err := r.ask(ctx, "RemoveRaftVoter(1)", func() error {
		if !first { // asking again: unless an answer that timed out removed it after all
			if q, err := brewkit.DescribeQuorum(ctx, r.cl); err == nil && !slices.Contains(ids(q.Voters), Replaced) {
				return nil
			}
		}
		first = false
		return removeRaftVoter(ctx, r.cl, Replaced, dir)
	}); err != nil {
		return err
	}
	if err := waitQuorum(ctx, r.cl, func(q brewkit.Quorum) bool {
		// Node 1 stays a broker: it goes on fetching the log, as an
		// observer (of a new leader, if it led: that one must hear from it).
		return len(q.Voters) == 3 && !slices.Contains(ids(q.Voters), Replaced) && q.LeaderID >= 0 &&
			slices.Contains(ids(q.Observers), Replaced)
	}); err != nil {
		return fmt.Errorf("controller 1 still a voter after RemoveRaftVoter: %w", err)
	}
	return nil
}

// ask sends a voter change, and asks again (up to 5 times, a second apart)
// when the answer says to: REQUEST_TIMED_OUT (the log ran ahead of a new
// voter) or NOT_LEADER_FOR_PARTITION (the broker that forwarded the request
// to the quorum's leader knew an older one: a new leader was elected in the
// meantime). Any other error ends the run.
func (r *dynamicRun) ask(ctx context.Context, what string, change func() error) error {
	for try := 1; ; try++ {
		err := change()
		if err == nil {
			return nil
		}
		if try == 5 || !(errors.Is(err, kerr.RequestTimedOut) || errors.Is(err, kerr.NotLeaderForPartition)) {
			return fmt.Errorf("%s: %w", what, err)
		}
		r.say(fmt.Sprintf("%s: %v; asking again", what, err))
		if err := brewkit.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
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

// ids is the voters' (or observers') ids, sorted.
func ids(vs []brewkit.Voter) []int32 {
	var out []int32
	for _, v := range vs {
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

// waitQuorum waits up to a minute for DescribeQuorum to satisfy ok.
func waitQuorum(ctx context.Context, cl *kgo.Client, ok func(brewkit.Quorum) bool) error {
	return brewkit.WaitFor(ctx, time.Minute, 250*time.Millisecond, func() bool {
		q, err := brewkit.DescribeQuorum(ctx, cl)
		return err == nil && ok(q)
	})
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
