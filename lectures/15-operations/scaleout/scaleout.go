// Package scaleout adds lecture 15's fourth node to a running cluster and
// moves partitions onto it, the way an operator does when Brew opens more
// shops: start node 4, see that nothing moves by itself, reassign with a
// replication throttle (AlterPartitionReassignments) and watch the copy,
// hand leadership to the new replicas, then drain node 4 and remove it.
// A witness writes and reads orders throughout: nothing acknowledged may be
// lost or duplicated.
package scaleout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/15-operations/witness"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Node is the node the lecture adds.
const Node = 4

// Config is one run.
type Config struct {
	Partitions int32 // of the topic moved
	Preload    int64 // bytes written to it before node 4 starts, so that the copy takes a while
	Throttle   int64 // bytes per second each broker may spend on the moving replicas
	Rate       int   // the witness' orders per second
	Drain      bool  // move everything off node 4 again and remove it at the end
	// Moved, if set, is called once the partitions are on node 4 and their
	// leaders elected, before the drain: a test compares the cluster with
	// Kafka's tools there. An error stops the run.
	Moved func(ctx context.Context, res Result) error
}

// Defaults: 6 partitions holding 96 MiB, node 4's share (64 MiB) copied at
// 4 MiB/s (about 16 s) with 200 orders a second beside. A follower fetches
// at most 1 MiB of a partition per request (replica.fetch.max.bytes), so the
// copy comes in steps of about 4 MiB, and the throttle holds an average over
// its window of 11 one-second samples: the copy must be many steps long for
// its rate to show the throttle (at 16 MiB a step more or less was 25%).
var Defaults = Config{Partitions: 6, Preload: 96 << 20, Throttle: 4 << 20, Rate: 200, Drain: true}

// Nodes starts and stops nodes: the stand that is up.
type Nodes interface {
	StartNode(ctx context.Context, n int) error
	StopNode(ctx context.Context, n int, kill bool) error
}

// Result is what the run saw.
type Result struct {
	Topic        string          `json:"topic"`
	Before       Assignment      `json:"before"`        // the replicas before node 4
	Untouched    bool            `json:"untouched"`     // node 4 up, and no replica moved by itself
	Target       Assignment      `json:"target"`        // what the reassignment asked for
	After        Assignment      `json:"after"`         // the replicas once it was done
	ISRFull      bool            `json:"isr_full"`      // every partition's ISR is its replicas
	Leaders      map[int32]int32 `json:"leaders"`       // after the preferred election
	Copied       int64           `json:"copied"`        // bytes node 4 holds once the copy is done
	CopyTook     time.Duration   `json:"copy_took"`     // from the reassignment until node 4 held all it holds at the end
	Rate         float64         `json:"rate"`          // Copied / CopyTook, bytes per second
	ReassignTook time.Duration   `json:"reassign_took"` // until Kafka called every partition's reassignment complete
	Throttle     int64           `json:"throttle"`      // as set
	Samples      []Sample        `json:"samples"`       // node 4's bytes over the copy
	Drained      bool            `json:"drained"`       // node 4 holds no replica any more
	DrainTook    time.Duration   `json:"drain_took"`
	Unregistered bool            `json:"unregistered"` // node 4 no longer a broker of the cluster
	Witness      witness.Report  `json:"witness"`
}

// Assignment is each partition's replicas, preferred leader first.
type Assignment map[int32][]int32

func (a Assignment) String() string {
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(a)) {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d:%v", p, a[p])
	}
	return b.String()
}

// On counts the partitions with a replica on node n.
func (a Assignment) On(n int32) int {
	c := 0
	for _, rs := range a {
		if slices.Contains(rs, n) {
			c++
		}
	}
	return c
}

// Sample is node 4's bytes of the topic at a moment of the copy.
type Sample struct {
	At    time.Duration `json:"at"`
	Bytes int64         `json:"bytes"`
}

// Plan spreads a topic's replicas over nodes 1-4 as evenly as it can while
// moving as little as it can: each partition keeps its replicas except that
// the most loaded node gives node 4 one replica, until node 4 carries its
// share. The new replica goes first, so the preferred election hands it
// the leadership.
func Plan(before Assignment) Assignment {
	target := Assignment{}
	load := map[int32]int{}
	total := 0
	for p, rs := range before {
		target[p] = slices.Clone(rs)
		for _, r := range rs {
			load[r]++
			total++
		}
	}
	share := total / 4 // 18 replicas on 4 nodes: node 4 takes 4
	for _, p := range slices.Sorted(maps.Keys(target)) {
		if load[Node] >= share {
			break
		}
		rs := target[p]
		if slices.Contains(rs, Node) {
			continue
		}
		// the most loaded of this partition's nodes hands its replica over
		from := slices.MaxFunc(rs, func(a, b int32) int {
			if c := load[a] - load[b]; c != 0 {
				return c
			}
			return int(b - a)
		})
		kept := slices.DeleteFunc(slices.Clone(rs), func(r int32) bool { return r == from })
		target[p] = append([]int32{Node}, kept...)
		load[from]--
		load[Node]++
	}
	return target
}

// Run adds node 4 and moves the topic's partitions onto it.
func Run(ctx context.Context, cfg brewkit.Config, nodes Nodes, c Config, say func(string)) (res Result, err error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	r := &run{cl: cl, adm: adm, nodes: nodes, c: c, res: &res, say: say}
	res.Throttle = c.Throttle

	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return res, fmt.Errorf("listing the brokers: %w", err)
	}
	if slices.Contains(brokers.NodeIDs(), Node) {
		return res, errors.New("node 4 is already a broker of the cluster (an earlier run was interrupted?): `make restore` takes it out")
	}

	// A topic on nodes 1-3 only, as every topic was before node 4.
	if res.Topic, err = createOnThree(ctx, cl, adm, c.Partitions); err != nil {
		return res, err
	}
	defer r.deleteTopic(ctx)
	say(fmt.Sprintf("topic %s: %d partitions on nodes 1-3; writing %d MiB to it", res.Topic, c.Partitions, c.Preload>>20))
	if err := preload(ctx, cfg, res.Topic, c.Partitions, c.Preload); err != nil {
		return res, err
	}
	if res.Before, err = assignment(ctx, adm, res.Topic); err != nil {
		return res, err
	}

	w, err := witness.Start(ctx, cfg, res.Topic, c.Rate)
	if err != nil {
		return res, err
	}
	defer func() {
		if res.Witness.Sent == 0 {
			res.Witness = w.Stop(time.Minute)
		}
	}()
	say(fmt.Sprintf("the witness writes %d orders a second to it (acks=all) and reads them back", c.Rate))

	// Node 4 joins, the partitions move onto it under a throttle, it leads
	// where it is first; then (Drain) it is drained and taken out again.
	if err := r.addNode(ctx); err != nil {
		return res, err
	}
	if err := r.reassignThrottled(ctx); err != nil {
		return res, err
	}
	if err := r.electLeaders(ctx); err != nil {
		return res, err
	}
	if c.Moved != nil {
		if err := c.Moved(ctx, res); err != nil {
			return res, err
		}
	}
	if c.Drain {
		if err := r.drain(ctx); err != nil {
			return res, err
		}
		res.Witness = w.Stop(time.Minute) // before node 4 stops: the witness reads from wherever the leaders are
		if err := r.removeNode(ctx); err != nil {
			return res, err
		}
	}
	if res.Witness.Sent == 0 {
		res.Witness = w.Stop(time.Minute)
	}
	say("witness: " + res.Witness.String())
	return res, nil
}

// run is what one Run's steps share: the clients, the stand's nodes, the
// run's config, and what the run saw.
type run struct {
	cl    *kgo.Client
	adm   *kadm.Client
	nodes Nodes
	c     Config
	res   *Result
	say   func(string)
}

// deleteTopic deletes the run's topic and the throttles on its replicas,
// whatever step the run ended at.
func (r *run) deleteTopic(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	clearThrottles(dctx, r.adm, r.res.Topic) //nolint:errcheck // best effort, and reported by restore
	r.adm.DeleteTopic(dctx, r.res.Topic)     //nolint:errcheck // leftovers are harmless
}

// addNode is step 1, node 4 joins: a broker of the cluster, with nothing on
// it.
func (r *run) addNode(ctx context.Context) error {
	r.say("starting node 4 (a broker only)")
	start := time.Now()
	if err := r.nodes.StartNode(ctx, Node); err != nil {
		return fmt.Errorf("starting node 4: %w", err)
	}
	r.say(fmt.Sprintf("node 4 registered in %s", time.Since(start).Round(100*time.Millisecond)))
	now, err := assignment(ctx, r.adm, r.res.Topic)
	if err != nil {
		return err
	}
	r.res.Untouched = now.On(Node) == 0 && now.String() == r.res.Before.String()
	r.say(fmt.Sprintf("node 4 holds %d replicas: Kafka moves nothing onto a new broker by itself", now.On(Node)))
	return nil
}

// reassignThrottled is step 2, the reassignment, throttled: the throttles
// set, the target asked for, the copy watched until Kafka calls it
// complete, and the throttles removed.
func (r *run) reassignThrottled(ctx context.Context) error {
	res := r.res
	res.Target = Plan(res.Before)
	if err := setThrottles(ctx, r.adm, res.Topic, res.Before, res.Target, r.c.Throttle); err != nil {
		return err
	}
	r.say(fmt.Sprintf("throttle: %d MiB/s per broker for the moving replicas; reassigning %d partitions onto node 4", r.c.Throttle>>20, res.Target.On(Node)))
	if err := reassign(ctx, r.adm, res.Topic, res.Target); err != nil {
		return err
	}
	start := time.Now()
	if err := watchCopy(ctx, r.cl, r.adm, res.Topic, start, res, r.say); err != nil {
		return err
	}
	res.ReassignTook = time.Since(start)
	res.CopyTook, res.Copied, res.Rate = copyRate(res.Samples)
	if err := clearThrottles(ctx, r.adm, res.Topic); err != nil {
		return err
	}
	r.say(fmt.Sprintf("copied %.1f MiB onto node 4 in %s: %.2f MiB/s against a throttle of %d MiB/s; throttles removed",
		float64(res.Copied)/(1<<20), res.CopyTook.Round(100*time.Millisecond), res.Rate/(1<<20), r.c.Throttle>>20))
	return nil
}

// electLeaders is step 3, leadership to the preferred replicas: node 4 leads
// where it is first.
func (r *run) electLeaders(ctx context.Context) error {
	res := r.res
	if err := electPreferred(ctx, r.adm, res.Topic); err != nil {
		return err
	}
	var err error
	if res.After, err = settled(ctx, r.adm, res.Topic, res.Target); err != nil {
		return err
	}
	if res.Leaders, res.ISRFull, err = leadersAndISR(ctx, r.adm, res.Topic); err != nil {
		return err
	}
	r.say(fmt.Sprintf("preferred leaders elected: node 4 leads %d partitions", count(res.Leaders, Node)))
	return nil
}

// drain is step 4, node 4 drained: the partitions reassigned back to their
// replicas before node 4, unthrottled.
func (r *run) drain(ctx context.Context) error {
	res := r.res
	start := time.Now()
	if err := reassign(ctx, r.adm, res.Topic, res.Before); err != nil {
		return err
	}
	if err := waitReassigned(ctx, r.cl, res.Topic); err != nil {
		return err
	}
	res.DrainTook = time.Since(start)
	back, err := settled(ctx, r.adm, res.Topic, res.Before)
	if err != nil {
		return err
	}
	res.Drained = back.On(Node) == 0
	r.say(fmt.Sprintf("drained node 4 in %s; stopping it and unregistering broker 4", res.DrainTook.Round(100*time.Millisecond)))
	return nil
}

// removeNode takes the drained node 4 out: stopped, then unregistered.
func (r *run) removeNode(ctx context.Context) error {
	if err := r.nodes.StopNode(ctx, Node, false); err != nil {
		return err
	}
	if err := Unregister(ctx, r.cl, r.adm); err != nil {
		return err
	}
	r.res.Unregistered = true
	return nil
}

// createOnThree creates a fresh topic with its replicas spread over nodes
// 1-3 explicitly (node 4, if some earlier run left it up, gets none).
func createOnThree(ctx context.Context, cl *kgo.Client, adm *kadm.Client, partitions int32) (string, error) {
	for range 5 {
		name := fmt.Sprintf("brew.ops.orders.%d", time.Now().UnixNano()%1_000_000)
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 30_000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
		for p := range partitions {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition = p
			a.Replicas = []int32{1 + p%3, 1 + (p+1)%3, 1 + (p+2)%3}
			t.ReplicaAssignment = append(t.ReplicaAssignment, a)
		}
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return "", fmt.Errorf("creating the topic: %w", err)
		}
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating %s: %w", name, err)
		}
		return name, brewkit.WaitTopics(ctx, adm, name)
	}
	return "", errors.New("creating a fresh topic: five names taken")
}

// preload writes bytes of padding records spread over the partitions.
func preload(ctx context.Context, cfg brewkit.Config, topic string, partitions int32, bytes int64) error {
	// Uncompressed random bytes: what the brokers store, and copy, is
	// what was written (kgo compresses with snappy by default).
	cl, err := brewkit.NewClient(cfg, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	value := make([]byte, 16<<10)
	rand.NewChaCha8([32]byte{15}).Read(value) //nolint:errcheck,gosec // never fails; padding, not a secret
	n := bytes / int64(len(value))
	errs := make(chan error, 1)
	for range n {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errs:
		return fmt.Errorf("writing to %s: %w", topic, err)
	default:
		return nil
	}
}

// assignment is the topic's replicas as the cluster has them now.
func assignment(ctx context.Context, adm *kadm.Client, topic string) (Assignment, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", topic, err)
	}
	a := Assignment{}
	for p, pd := range td[topic].Partitions {
		a[p] = pd.Replicas
	}
	return a, nil
}

// settled reads the topic's assignment once the metadata shows want. The
// controller ends a reassignment first; each broker learns of it from the
// metadata log a moment later, and a Metadata request may reach one that
// has not yet. After 30 s it returns what it reads, for the caller to judge.
func settled(ctx context.Context, adm *kadm.Client, topic string, want Assignment) (Assignment, error) {
	var a Assignment
	var err error
	_ = brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		a, err = assignment(ctx, adm, topic)
		return err == nil && a.String() == want.String()
	})
	if err == nil {
		err = ctx.Err()
	}
	return a, err
}

// leadersAndISR reads each partition's leader and whether every ISR is
// full, once the metadata shows the preferred leaders elected and the ISRs
// full (as settled: at most 30 s, then what it reads).
func leadersAndISR(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int32, bool, error) {
	var leaders map[int32]int32
	var full bool
	var err error
	_ = brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		var td kadm.TopicDetails
		if td, err = adm.ListTopics(ctx, topic); err == nil {
			err = td.Error()
		}
		if err != nil {
			err = fmt.Errorf("describing %s: %w", topic, err)
			return false
		}
		preferred := true
		leaders, full = map[int32]int32{}, true
		for p, pd := range td[topic].Partitions {
			leaders[p] = pd.Leader
			preferred = preferred && len(pd.Replicas) > 0 && pd.Leader == pd.Replicas[0]
			a, b := slices.Sorted(slices.Values(pd.Replicas)), slices.Sorted(slices.Values(pd.ISR))
			full = full && slices.Equal(a, b)
		}
		return preferred && full
	})
	if err == nil {
		err = ctx.Err()
	}
	return leaders, full, err
}

// setThrottles does what kafka-reassign-partitions --throttle does: a rate
// on every broker, applied to the replicas that move: on the leaders' side
// the partitions' current replicas, on the followers' side the new ones.
func setThrottles(ctx context.Context, adm *kadm.Client, topic string, before, target Assignment, rate int64) error {
	var leaders, followers []string
	for _, p := range slices.Sorted(maps.Keys(target)) {
		if slices.Equal(before[p], target[p]) {
			continue
		}
		for _, r := range before[p] {
			leaders = append(leaders, fmt.Sprintf("%d:%d", p, r))
		}
		for _, r := range target[p] {
			if !slices.Contains(before[p], r) {
				followers = append(followers, fmt.Sprintf("%d:%d", p, r))
			}
		}
	}
	rs := strconv.FormatInt(rate, 10)
	brokerConfigs := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: &rs},
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate", Value: &rs},
	}
	for _, b := range []int32{1, 2, 3, Node} {
		resp, err := adm.AlterBrokerConfigs(ctx, brokerConfigs, b)
		if err == nil {
			_, err = resp.On(strconv.Itoa(int(b)), nil)
		}
		if err != nil {
			return fmt.Errorf("setting the replication throttle on broker %d: %w", b, err)
		}
	}
	l, f := strings.Join(leaders, ","), strings.Join(followers, ",")
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: &l},
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.replicas", Value: &f},
	}, topic)
	if err == nil {
		_, err = resp.On(topic, nil)
	}
	if err != nil {
		return fmt.Errorf("marking %s's moving replicas as throttled: %w", topic, err)
	}
	return nil
}

// clearThrottles removes what setThrottles set, as kafka-reassign-partitions
// --verify does once the reassignment is done: a throttle left behind slows
// every later catch-up of those replicas.
func clearThrottles(ctx context.Context, adm *kadm.Client, topic string) error {
	for _, b := range []int32{1, 2, 3, Node} {
		_, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.rate"},
			{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"},
		}, b)
		if err != nil && b != Node { // node 4 may be down already
			return fmt.Errorf("removing the replication throttle on broker %d: %w", b, err)
		}
	}
	_, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.replicas"},
		{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.replicas"},
	}, topic)
	return err
}

func reassign(ctx context.Context, adm *kadm.Client, topic string, target Assignment) error {
	var req kadm.AlterPartitionAssignmentsReq
	for p, rs := range target {
		req.Assign(topic, p, rs)
	}
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("reassigning %s: %w", topic, err)
	}
	return nil
}

// Reassigning lists the partitions being reassigned now, by topic: every
// one in the cluster (kadm's ListPartitionReassignments asks for the
// partitions it is given, and for none given a topic alone or no topic).
func Reassigning(ctx context.Context, cl *kgo.Client) (map[string][]int32, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 10_000 // Topics nil: all of them
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("listing reassignments: %w", err)
	}
	out := map[string][]int32{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[t.Topic] = append(out[t.Topic], p.Partition)
		}
		slices.Sort(out[t.Topic])
	}
	return out, nil
}

// watchCopy samples node 4's bytes every half second until no partition is
// being reassigned.
func watchCopy(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, start time.Time, res *Result, say func(string)) error {
	lastSaid := time.Time{}
	for {
		moving, err := Reassigning(ctx, cl)
		if err != nil {
			return err
		}
		left := moving[topic]
		size, err := nodeBytes(ctx, adm, topic, slices.Sorted(maps.Keys(res.Target)))
		if err == nil {
			res.Samples = append(res.Samples, Sample{time.Since(start), size})
			res.Copied = size
		}
		if len(left) == 0 {
			return nil
		}
		if time.Since(lastSaid) >= 2*time.Second {
			say(fmt.Sprintf("  %4.1fs: node 4 holds %.1f MiB; partitions still moving: %v", time.Since(start).Seconds(), float64(size)/(1<<20), left))
			lastSaid = time.Now()
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("the reassignment of %s did not finish within 5 minutes (partitions %v): `make restore` cancels it", topic, left)
		}
		if err := brewkit.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

func waitReassigned(ctx context.Context, cl *kgo.Client, topic string) error {
	return brewkit.WaitFor(ctx, 5*time.Minute, 500*time.Millisecond, func() bool {
		moving, err := Reassigning(ctx, cl)
		return err == nil && len(moving[topic]) == 0
	})
}

// nodeBytes is the size of the topic's replicas on node 4. (kadm asks for
// the partitions the set names, none for a topic given alone.)
func nodeBytes(ctx context.Context, adm *kadm.Client, topic string, partitions []int32) (int64, error) {
	set := kadm.TopicsSet{}
	set.Add(topic, partitions...)
	dirs, err := adm.DescribeBrokerLogDirs(ctx, Node, set)
	if err != nil {
		return 0, err
	}
	var size int64
	dirs.Each(func(d kadm.DescribedLogDir) { size += d.Size() })
	return size, nil
}

func electPreferred(ctx context.Context, adm *kadm.Client, topic string) error {
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: nil})
	if err != nil {
		return fmt.Errorf("electing the preferred leaders: %w", err)
	}
	for _, ps := range res {
		for _, r := range ps {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				return fmt.Errorf("electing the preferred leader of %s/%d: %w", r.Topic, r.Partition, r.Err)
			}
		}
	}
	return nil
}

// Unregister takes broker 4 out of the cluster's metadata once it is
// stopped (UnregisterBroker, KIP-1073's kafka-cluster unregister): a
// stopped broker stays registered, fenced, until then.
func Unregister(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = Node
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil && !errors.Is(err, kerr.BrokerIDNotRegistered) {
		return fmt.Errorf("unregistering broker 4: %w", err)
	}
	return brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
		bs, err := adm.ListBrokers(ctx)
		return err == nil && !slices.Contains(bs.NodeIDs(), Node)
	})
}
