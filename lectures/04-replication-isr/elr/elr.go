// Package elr shows KIP-966's eligible leader replicas (ELR) on the stand.
// When a partition's ISR shrinks below min.insync.replicas, the replica that
// leaves it goes to the ELR instead of being forgotten: no acks=all write can
// be acknowledged without it from then on, so it holds every committed
// record, and the controller may elect it leader although it is not in the
// ISR. Two topics show it, both with min.insync.replicas=2: one on three
// replicas (the course's shape) and one on two, whose every replica is
// stopped, so that its new leader comes from the ELR.
package elr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// The two topics' replicas: the first of each list is its preferred leader.
// Node 3 leads the first and is never stopped (it is the simulation's fixed
// controller, and it keeps the first topic's ISR at one replica).
var (
	ReplicasRF3 = []int32{3, 1, 2}
	ReplicasRF2 = []int32{1, 2}
)

// Acked is how many records are written to the two-replica topic with
// acks=all while every node is up.
const Acked = 10

// Partition is partition 0 of a topic as DescribeTopicPartitions shows it.
type Partition struct {
	Topic        string  `json:"topic"`
	Leader       int32   `json:"leader"` // -1: no leader
	Epoch        int32   `json:"leader_epoch"`
	ISR          []int32 `json:"isr"`            // sorted
	ELR          []int32 `json:"elr"`            // sorted
	LastKnownELR []int32 `json:"last_known_elr"` // sorted
	Offline      []int32 `json:"offline"`        // sorted
}

// Step is both topics after one stop or start.
type Step struct {
	What string    `json:"what"`
	RF3  Partition `json:"rf3"`
	RF2  Partition `json:"rf2"`
}

// Result is what one run saw.
type Result struct {
	RF3, RF2  string `json:"-"`
	Steps     []Step `json:"steps"`
	Acked     int    `json:"acked"`          // acks=all records written to RF2 with every node up
	Elected   int32  `json:"elected"`        // RF2's leader once node 2 is back
	FromELR   bool   `json:"from_elr"`       // node 2 was in RF2's ELR, not its ISR, just before
	HighWater int64  `json:"high_watermark"` // RF2's high watermark under that leader
	Simulated bool   `json:"simulated"`
}

// Run creates the two topics, stops node 2 and then node 1, starts node 2
// and then node 1, and describes both topics after each step; it deletes the
// topics at the end. say receives the narrative as it happens.
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Result, error) {
	var res Result
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	suffix := strconv.Itoa(rand.IntN(1e6))
	res.RF3, res.RF2 = "brew.elr.rf3."+suffix, "brew.elr.rf2."+suffix
	for _, t := range []struct {
		name     string
		replicas []int32
	}{{res.RF3, ReplicasRF3}, {res.RF2, ReplicasRF2}} {
		if err := create(ctx, cl, t.name, t.replicas); err != nil {
			return res, err
		}
		defer adm.DeleteTopics(context.WithoutCancel(ctx), t.name) //nolint:errcheck // a leftover demo topic is harmless
	}
	if err := brewkit.WaitTopics(ctx, adm, res.RF3, res.RF2); err != nil {
		return res, err
	}
	say(fmt.Sprintf("%s on replicas %v and %s on replicas %v, min.insync.replicas=2", res.RF3, ReplicasRF3, res.RF2, ReplicasRF2))

	d := &describer{cl: cl, rf3: res.RF3, rf2: res.RF2}
	if res.Simulated {
		// kfake keeps no ELR and places replicas its own way: show the
		// topics once, stop nothing.
		s, err := d.step(ctx)
		s.What = "all nodes up"
		res.Steps = append(res.Steps, s)
		return res, err
	}
	if _, err := d.wait(ctx, func(s Step) bool { return full(s.RF3, ReplicasRF3) && full(s.RF2, ReplicasRF2) }); err != nil {
		return res, fmt.Errorf("waiting for both topics to be fully in sync: %w", err)
	}
	if err := write(ctx, cfg, res.RF2, Acked); err != nil {
		return res, err
	}
	res.Acked = Acked
	say(fmt.Sprintf("%d records written to %s with acks=all", Acked, res.RF2))
	// A follower learns the new high watermark from the answer to its next
	// fetch, which the leader holds up to replica.fetch.wait.max.ms (500 ms)
	// when it has nothing new: wait until node 2 knows what is committed.
	if err := followerCaughtUp(ctx, cl, adm, res.RF2, 2, Acked); err != nil {
		return res, err
	}

	err = d.walk(ctx, nodes, &res, say)
	return res, err
}

// move is one step of the walk: a node stopped or started (node 0: none),
// then the state the cluster settles in.
type move struct {
	what  string
	node  int
	start bool
	done  func(Step) bool
}

// walk is the nodes' stops and starts, in order, with the state each waits for.
var walk = []move{
	{"all nodes up", 0, false, func(s Step) bool { return true }},
	// RF3 keeps two replicas in sync, RF2 drops below min ISR: node 2 goes to its ELR.
	{"node 2 stopped", 2, false, func(s Step) bool { return !has(s.RF3.ISR, 2) && !has(s.RF2.ISR, 2) }},
	// Both topics below min ISR; RF2 has no replica up, and no leader.
	{"node 1 stopped", 1, false, func(s Step) bool { return !has(s.RF3.ISR, 1) && !has(s.RF2.ISR, 1) }},
	// Node 2 is back: RF2 may elect it from the ELR.
	{"node 2 started", 2, true, func(s Step) bool { return s.RF2.Leader == 2 && has(s.RF3.ISR, 2) }},
	{"node 1 started", 1, true, func(s Step) bool { return full(s.RF3, ReplicasRF3) && full(s.RF2, ReplicasRF2) }},
}

// walk makes each move and notes the state it settles in; after node 2's
// start, who RF2 elected and whether from the ELR.
func (d *describer) walk(ctx context.Context, nodes brewkit.NodeControl, res *Result, say func(string)) error {
	for _, st := range walk {
		switch {
		case st.node == 0:
		case st.start:
			say(fmt.Sprintf("starting node %d", st.node))
			if err := nodes.StartNode(ctx, st.node); err != nil {
				return fmt.Errorf("starting node %d: %w", st.node, err)
			}
		default:
			say(fmt.Sprintf("stopping node %d (SIGTERM)", st.node))
			if err := nodes.StopNode(ctx, st.node, false); err != nil {
				return fmt.Errorf("stopping node %d: %w", st.node, err)
			}
		}
		s, err := d.wait(ctx, st.done)
		if err != nil {
			return fmt.Errorf("after %s: %w", st.what, err)
		}
		s.What = st.what
		res.Steps = append(res.Steps, s)
		say(fmt.Sprintf("%s: %s", st.what, s.Short()))
		if st.what == "node 2 started" {
			before := res.Steps[len(res.Steps)-2].RF2
			res.Elected = s.RF2.Leader
			res.FromELR = has(before.ELR, res.Elected) && !has(before.ISR, res.Elected)
			if res.HighWater, err = highWatermark(ctx, kadm.NewClient(d.cl), res.RF2); err != nil {
				return err
			}
		}
	}
	return nil
}

// Short is one line of the step for the narrative.
func (s Step) Short() string {
	f := func(p Partition) string {
		return fmt.Sprintf("leader %s isr %v elr %v", leader(p.Leader), p.ISR, p.ELR)
	}
	return "rf3 " + f(s.RF3) + "; rf2 " + f(s.RF2)
}

// Print writes the steps as a table and what the two-replica topic shows.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "rf3 is %s on replicas %v, rf2 is %s on replicas %v; both min.insync.replicas=2\n\n", r.RF3, ReplicasRF3, r.RF2, ReplicasRF2)
	t := brewkit.NewTable(w, "STEP", "TOPIC", "LEADER", "ISR", "ELR", "LAST-KNOWN-ELR")
	for _, s := range r.Steps {
		t.Row(s.What, "rf3", leader(s.RF3.Leader), ids(s.RF3.ISR), ids(s.RF3.ELR), ids(s.RF3.LastKnownELR))
		t.Row("", "rf2", leader(s.RF2.Leader), ids(s.RF2.ISR), ids(s.RF2.ELR), ids(s.RF2.LastKnownELR))
	}
	t.Flush()
	fmt.Fprintln(w)
	if r.Simulated {
		fmt.Fprintln(w, "(embedded simulation: kfake keeps no ELR and places replicas its own way, so no node was stopped; run this on the native or docker stand)")
		return
	}
	fmt.Fprintf(w, "rf2: node %d was elected leader from the ELR, not from the ISR; its high watermark is %d: all %d acknowledged records\n",
		r.Elected, r.HighWater, r.Acked)
}

// describer reads partition 0 of both topics with DescribeTopicPartitions,
// the request that returns the ELR (Metadata does not).
type describer struct {
	cl       *kgo.Client
	rf3, rf2 string
}

func (d *describer) step(ctx context.Context) (Step, error) {
	ps, err := Describe(ctx, d.cl, d.rf3, d.rf2)
	if err != nil {
		return Step{}, err
	}
	return Step{RF3: ps[d.rf3], RF2: ps[d.rf2]}, nil
}

// wait describes both topics until done holds, for up to two minutes (a
// node that starts again must first rejoin the controller quorum).
func (d *describer) wait(ctx context.Context, done func(Step) bool) (Step, error) {
	var last Step
	var lastErr error
	err := brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		s, err := d.step(rctx)
		if err != nil {
			lastErr = err
			return false
		}
		last, lastErr = s, nil
		return done(s)
	})
	if err != nil {
		if lastErr != nil {
			return last, fmt.Errorf("%w (last error: %v)", err, lastErr)
		}
		return last, fmt.Errorf("%w (last seen: %s)", err, last.Short())
	}
	return last, nil
}

// Describe returns partition 0 of each topic as DescribeTopicPartitions
// (v0, KIP-966) reports it, with its eligible leader replicas.
func Describe(ctx context.Context, cl *kgo.Client, topics ...string) (map[string]Partition, error) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 100
	for _, topic := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("DescribeTopicPartitions: %w", err)
	}
	out := map[string]Partition{}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("DescribeTopicPartitions %s: %w", *t.Topic, err)
		}
		for _, p := range t.Partitions {
			if p.Partition != 0 {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && !errors.Is(err, kerr.LeaderNotAvailable) {
				return nil, fmt.Errorf("DescribeTopicPartitions %s-0: %w", *t.Topic, err)
			}
			out[*t.Topic] = Partition{
				Topic:        *t.Topic,
				Leader:       p.LeaderID,
				Epoch:        p.LeaderEpoch,
				ISR:          sorted(p.ISR),
				ELR:          sorted(p.EligibleLeaderReplicas),
				LastKnownELR: sorted(p.LastKnownELR),
				Offline:      sorted(p.OfflineReplicas),
			}
		}
	}
	for _, topic := range topics {
		if _, ok := out[topic]; !ok {
			return nil, fmt.Errorf("DescribeTopicPartitions: no partition 0 of %s in the answer", topic)
		}
	}
	return out, nil
}

// create makes a one-partition topic on the given replicas with
// min.insync.replicas=2, said out loud (it is the stand's default too).
func create(ctx context.Context, cl *kgo.Client, topic string, replicas []int32) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	for k, v := range map[string]string{"min.insync.replicas": "2", "retention.ms": "3600000"} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("creating %s on replicas %v: %w", topic, replicas, err)
	}
	return nil
}

// write produces n records to partition 0 of topic with acks=all.
func write(ctx context.Context, cfg brewkit.Config, topic string, n int) error {
	cl, err := brewkit.NewClient(cfg, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: 0, Key: []byte(brewkit.OrderID(int64(i + 1))), Value: []byte("{}")})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("writing to %s with acks=all: %w", topic, err)
	}
	return nil
}

// highWatermark asks for partition 0's end offset, for up to 10 s: a leader
// just elected answers OFFSET_NOT_AVAILABLE until its high watermark is known.
func highWatermark(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	var hw int64
	var last error
	err := brewkit.WaitFor(ctx, 10*time.Second, 250*time.Millisecond, func() bool {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			last = err
			return false
		}
		o, _ := ends.Lookup(topic, 0)
		hw, last = o.Offset, o.Err
		return o.Err == nil
	})
	if err != nil {
		return 0, fmt.Errorf("end offset of %s: %w (last answer: %v)", topic, err, last)
	}
	return hw, nil
}

// followerCaughtUp waits, for up to 10 s, until node's replica of
// partition 0 has a high watermark of at least want. It asks the node itself
// with a consumer's Fetch (v11 and later, KIP-392, are served by a follower
// too), whose answer carries that replica's own high watermark; ListOffsets
// would ask the leader.
func followerCaughtUp(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, node int32, want int64) error {
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("topic id of %s: %w", topic, err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes = -1, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, details[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = 0, 0, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	var hw int64 = -1
	var last error
	err = brewkit.WaitFor(ctx, 10*time.Second, 100*time.Millisecond, func() bool {
		resp, err := cl.Broker(int(node)).Request(ctx, req)
		if err != nil {
			last = err
			return false
		}
		fr := resp.(*kmsg.FetchResponse)
		if last = kerr.ErrorForCode(fr.ErrorCode); last != nil {
			return false
		}
		if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
			last = errors.New("no partition 0 in the answer")
			return false
		}
		p := fr.Topics[0].Partitions[0]
		if last = kerr.ErrorForCode(p.ErrorCode); last != nil {
			return false
		}
		hw = p.HighWatermark
		return hw >= want
	})
	if err != nil {
		return fmt.Errorf("node %d's replica of %s-0 at high watermark %d, want %d: %w (last error: %v)", node, topic, hw, want, err, last)
	}
	return nil
}

// full reports whether p has a leader and every replica in its ISR.
func full(p Partition, replicas []int32) bool {
	return p.Leader >= 0 && slices.Equal(p.ISR, sorted(replicas))
}

func has(s []int32, n int32) bool { return slices.Contains(s, n) }

func sorted(s []int32) []int32 {
	out := slices.Clone(s)
	slices.Sort(out)
	if out == nil {
		out = []int32{}
	}
	return out
}

func leader(n int32) string {
	if n < 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

func ids(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
