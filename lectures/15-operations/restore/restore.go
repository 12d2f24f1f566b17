// Package restore brings the course stand back to its three nodes whatever
// step of lecture 15 was interrupted: a reassignment cancelled, every
// replica on node 4 moved back to nodes 1-3, the replication throttles
// removed, node 4 stopped and unregistered. `make restore` runs it before
// starting what is stopped.
package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/15-operations/scaleout"
)

// Done is what Run did.
type Done struct {
	Cancelled    int // reassignments in progress it cancelled
	Moved        int // partitions it moved off node 4
	Throttles    int // throttle settings it removed
	Stopped      bool
	Unregistered bool
}

func (d Done) String() string {
	if d == (Done{}) {
		return "restore: nothing of lecture 15 was left; the stand is as the course wants it"
	}
	var did []string
	if d.Cancelled > 0 {
		did = append(did, fmt.Sprintf("cancelled %d reassignments", d.Cancelled))
	}
	if d.Moved > 0 {
		did = append(did, fmt.Sprintf("moved %d partitions off node 4", d.Moved))
	}
	if d.Throttles > 0 {
		did = append(did, fmt.Sprintf("removed %d throttle settings", d.Throttles))
	}
	if d.Stopped {
		did = append(did, "stopped node 4")
	}
	if d.Unregistered {
		did = append(did, "unregistered broker 4")
	}
	return "restore: " + strings.Join(did, ", ")
}

// Nodes stops node 4 on the stand that is up.
type Nodes interface {
	StopNode(ctx context.Context, n int, kill bool) error
}

// Run restores the stand.
func Run(ctx context.Context, cfg brewkit.Config, nodes Nodes) (d Done, err error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return d, err
	}
	defer cl.Close()
	r := &run{cl: cl, adm: adm, d: &d}

	// 1. Reassignments in progress: cancelled, their replicas as before.
	if err := r.cancelReassignments(ctx); err != nil {
		return d, err
	}

	// 2. Every replica on node 4 back onto nodes 1-3.
	td, err := adm.ListTopics(ctx)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return d, fmt.Errorf("listing topics: %w", err)
	}
	if err := r.moveOffFour(ctx, td); err != nil {
		return d, err
	}

	// 3. Throttles: on every broker, and on any topic that still has some.
	if d.Throttles, err = clearThrottles(ctx, adm, td.Names()); err != nil {
		return d, err
	}

	// 4. Node 4 out: stopped, then unregistered.
	if err := r.removeFour(ctx, nodes); err != nil {
		return d, err
	}
	return d, nil
}

// run is what one Run's steps share: the clients, and what the run did.
type run struct {
	cl  *kgo.Client
	adm *kadm.Client
	d   *Done
}

// cancelReassignments cancels every reassignment in progress: each of its
// partitions keeps the replicas it had before.
func (r *run) cancelReassignments(ctx context.Context) error {
	inflight, err := scaleout.Reassigning(ctx, r.cl)
	if err != nil {
		return err
	}
	var cancel kadm.AlterPartitionAssignmentsReq
	for t, ps := range inflight {
		for _, p := range ps {
			cancel.CancelAssign(t, p)
			r.d.Cancelled++
		}
	}
	if r.d.Cancelled == 0 {
		return nil
	}
	resp, err := r.adm.AlterPartitionAssignments(ctx, cancel)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("cancelling reassignments: %w", err)
	}
	return nil
}

// moveOffFour reassigns every partition of td with a replica on node 4
// onto nodes 1-3 (offFour), and waits up to 3 minutes for the copy.
func (r *run) moveOffFour(ctx context.Context, td kadm.TopicDetails) error {
	var move kadm.AlterPartitionAssignmentsReq
	asked := 0
	for _, t := range td.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			if !slices.Contains(p.Replicas, scaleout.Node) {
				continue
			}
			move.Assign(t.Topic, p.Partition, offFour(p.Replicas))
			asked++
		}
	}
	if asked == 0 {
		return nil
	}
	resp, err := r.adm.AlterPartitionAssignments(ctx, move)
	if err != nil {
		return fmt.Errorf("moving partitions off node 4: %w", err)
	}
	for _, p := range resp.Sorted() {
		switch {
		case p.Err == nil:
			r.d.Moved++
		case errors.Is(p.Err, kerr.UnknownTopicOrPartition):
			// Deleted since the listing (the run Ctrl-C stopped deletes
			// its topic on the way out): nothing left to move.
		default:
			return fmt.Errorf("moving %s-%d off node 4: %w", p.Topic, p.Partition, p.Err)
		}
	}
	if err := brewkit.WaitFor(ctx, 3*time.Minute, 500*time.Millisecond, func() bool {
		left, err := scaleout.Reassigning(ctx, r.cl)
		return err == nil && len(left) == 0
	}); err != nil {
		return fmt.Errorf("moving partitions off node 4: not done within 3 minutes: %w", err)
	}
	return nil
}

// removeFour stops node 4 if it is up, and unregisters broker 4 if it is
// still registered (a stopped broker stays registered, fenced).
func (r *run) removeFour(ctx context.Context, nodes Nodes) error {
	alive, err := r.adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("listing the brokers: %w", err)
	}
	if slices.Contains(alive.NodeIDs(), scaleout.Node) {
		if err := nodes.StopNode(ctx, scaleout.Node, false); err != nil {
			return err
		}
		r.d.Stopped = true
	}
	registered, _, err := RegisteredBrokers(ctx, r.cl)
	if err != nil {
		return err
	}
	if slices.Contains(registered, scaleout.Node) {
		if err := scaleout.Unregister(ctx, r.cl, r.adm); err != nil {
			return err
		}
		r.d.Unregistered = true
	}
	return nil
}

// offFour is replicas with node 4 replaced by the first of nodes 1-3 the
// partition lacks, keeping the order (the preferred leader stays first
// unless it was node 4).
func offFour(replicas []int32) []int32 {
	out := slices.Clone(replicas)
	for i, r := range out {
		if r != scaleout.Node {
			continue
		}
		for n := int32(1); n <= 3; n++ {
			if !slices.Contains(out, n) {
				out[i] = n
				break
			}
		}
	}
	return out
}

var throttleConfigs = map[bool][]string{
	true:  {"leader.replication.throttled.rate", "follower.replication.throttled.rate"},         // broker
	false: {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}, // topic
}

// clearThrottles deletes every replication throttle that is set, and says how many.
func clearThrottles(ctx context.Context, adm *kadm.Client, topics []string) (int, error) {
	n := 0
	brokers, err := adm.DescribeBrokerConfigs(ctx, 1, 2, 3)
	if err != nil {
		return 0, fmt.Errorf("describing the brokers' configs: %w", err)
	}
	for _, rc := range brokers {
		for _, c := range rc.Configs {
			if slices.Contains(throttleConfigs[true], c.Key) && c.Source == kmsg.ConfigSourceDynamicBrokerConfig {
				if err := deleteConfig(ctx, adm, true, rc.Name, c.Key); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	if len(topics) == 0 {
		return n, nil
	}
	tcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return n, fmt.Errorf("describing the topics' configs: %w", err)
	}
	for _, rc := range tcs {
		for _, c := range rc.Configs {
			if slices.Contains(throttleConfigs[false], c.Key) && c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				if err := deleteConfig(ctx, adm, false, rc.Name, c.Key); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

func deleteConfig(ctx context.Context, adm *kadm.Client, broker bool, name, key string) error {
	del := []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: key}}
	var err error
	if broker {
		var id int32
		fmt.Sscan(name, &id) //nolint:errcheck // a broker config's name is its id
		_, err = adm.AlterBrokerConfigs(ctx, del, id)
	} else {
		_, err = adm.AlterTopicConfigs(ctx, del, name)
	}
	if err != nil {
		return fmt.Errorf("removing %s from %s: %w", key, name, err)
	}
	return nil
}

// RegisteredBrokers lists every registered broker, fenced ones too (a
// stopped broker stays registered, fenced, until it is unregistered), and
// which of them are fenced.
func RegisteredBrokers(ctx context.Context, cl *kgo.Client) (all, fenced []int32, err error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("describing the cluster: %w", err)
	}
	for _, b := range resp.Brokers {
		all = append(all, b.NodeID)
		if b.IsFenced {
			fenced = append(fenced, b.NodeID)
		}
	}
	slices.Sort(all)
	slices.Sort(fenced)
	return all, fenced, nil
}
