package firedrill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The quorum step on its own, on the drill's topic shape (three partitions,
// three replicas, the stand's min.insync.replicas=2) with a till writing
// acks=all as the drill's does. Node 3 stops and the controller takes it out
// of every ISR; then node 2 stops. Its controlled shutdown still has a
// quorum (nodes 1 and 2 are two of three voters): its leaderships move to
// node 1, the ISRs shrink to [1] and node 2 enters the ELR (KIP-966: the ISR
// fell below min.insync.replicas). Only then is the quorum gone. Node 1 leads
// every partition and refuses an acks=all write at once with
// NOT_ENOUGH_REPLICAS; the till's client retries it until its delivery
// timeout and fails it with kgo.ErrRecordTimeout.
func TestQuorumStepShrinksISRThenRefusesWritesAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cl := env.Client(t)
	adm := kadm.NewClient(cl)

	// The drill's topic, made the way Run makes it.
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.obs.drill.", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Last of all, once the nodes are back (below): only a controller
	// deletes a topic.
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Errorf("dropping %s: %v", topic, err)
		}
	})
	cfgs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfgs.On(topic, nil); err != nil {
		t.Fatal(err)
	} else if v := configValue(c, "min.insync.replicas"); v != "2" {
		t.Fatalf("%s has min.insync.replicas=%s; the drill's topic takes the stand's 2", topic, v)
	}

	// The drill's till: acks=all, the drill's rate and its 10 s bound.
	tcfg := env.Config
	tcfg.Timeout = tillTimeout
	tillCtx, stopTill := context.WithCancel(ctx)
	till, err := kitchen.StartTill(tillCtx, tcfg, kitchen.NewMetrics(), topic, Defaults.Rate, 0)
	if err != nil {
		stopTill()
		t.Fatal(err)
	}

	stopped := map[int]bool{}
	t.Cleanup(func() {
		// Nodes first: a till's record in flight then lands within its
		// bound.
		rctx, rcancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer rcancel()
		for _, n := range []int{2, 3} {
			if stopped[n] {
				if err := nodes.StartNode(rctx, n); err != nil {
					t.Errorf("starting node %d again: %v", n, err)
				}
			}
		}
		till.Close()
		stopTill()
		if err := whole(rctx, adm, func(s string) { t.Log(s) }); err != nil {
			t.Errorf("restoring the stand: %v", err)
		}
	})

	if err := brewkit.WaitFor(ctx, 30*time.Second, 50*time.Millisecond, func() bool { return till.Placed() >= int64(Defaults.Rate) }); err != nil {
		t.Fatalf("the till placed %d orders on the whole stand (failed %d, last: %v): %v", till.Placed(), till.Failed(), till.LastErr(), err)
	}
	if n := till.Failed(); n > 0 {
		t.Fatalf("%d of the till's writes failed on the whole stand, the last with %v", n, till.LastErr())
	}
	view := waitView(ctx, t, cl, -1, topic, "every replica in sync", func(v views) bool {
		return v.everywhere(func(p partView) bool { return len(p.ISR) == 3 })
	})
	if q, err := brewkit.DescribeQuorum(ctx, cl); err == nil {
		t.Logf("whole stand, the active controller is node %d: %s", q.LeaderID, view)
	}

	// Node 3 stops, and the controller takes it out of every ISR. The ISRs
	// keep two replicas, min.insync.replicas: node 3 enters no ELR.
	at := time.Now()
	if err := nodes.StopNode(ctx, 3, false); err != nil {
		t.Fatal(err)
	}
	stopped[3] = true
	took3 := time.Since(at)
	view = waitView(ctx, t, cl, -1, topic, "the controller takes node 3 out of every ISR", func(v views) bool {
		return v.everywhere(func(p partView) bool { return p.Leader != 3 && !slices.Contains(p.ISR, 3) })
	})
	t.Logf("node 3 stopped (SIGTERM) in %s; %s after the stop began: %s", took3.Round(100*time.Millisecond), time.Since(at).Round(100*time.Millisecond), view)
	for _, p := range view {
		if !slices.Equal(p.ISR, []int32{1, 2}) || len(p.ELR) > 0 {
			t.Errorf("node 3 stopped: partition %s, want isr [1 2] elr []", p)
		}
	}

	// Node 2 stops: node 1 alone is no majority. Its controlled shutdown
	// still has one: wait until node 1 no longer counts node 2 anywhere.
	at = time.Now()
	if err := nodes.StopNode(ctx, 2, false); err != nil {
		t.Fatal(err)
	}
	stopped[2] = true
	took2 := time.Since(at)
	view = waitView(ctx, t, cl, 1, topic, "node 1 reports node 2 out of every ISR", func(v views) bool {
		return v.everywhere(func(p partView) bool { return p.Leader != 2 && !slices.Contains(p.ISR, 2) })
	})
	seen := time.Since(at)
	placed := till.Placed()
	t.Logf("node 2 stopped (SIGTERM) in %s; %s after the stop began node 1 reports: %s", took2.Round(100*time.Millisecond), seen.Round(100*time.Millisecond), view)
	// Node 1 leads every partition alone, node 2 in its ELR.
	for _, p := range view {
		if p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) || !slices.Equal(p.ELR, []int32{2}) || p.Err != nil {
			t.Errorf("node 2 stopped: node 1 reports partition %s, want leader 1 isr [1] elr [2]", p)
		}
	}

	// No active controller: node 1, the only voter up, is not it (what
	// BrewNoActiveController reads).
	var active string
	if err := brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		active = activeControllerCount(ctx, stand.MetricsPort(1))
		return active == "0" || active == "0.0"
	}); err != nil {
		t.Errorf("node 1's ActiveControllerCount is %s %s after node 2's stop began, want 0", active, time.Since(at).Round(100*time.Millisecond))
	} else {
		t.Logf("node 1's ActiveControllerCount is 0 %s after node 2's stop began", time.Since(at).Round(100*time.Millisecond))
	}

	// Node 1 refuses an acks=all write at once: one write to each
	// partition, without retries, shows what the broker answers.
	// (AlwaysRetryEOF as the till's: on the docker stand a stopped node's
	// port accepts and closes.)
	probe, err := brewkit.NewClient(env.Config, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(0), kgo.AlwaysRetryEOF())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	// Its metadata first, so that the times below are the writes' alone.
	if _, err := kadm.NewClient(probe).Metadata(ctx, topic); err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		sent := time.Now()
		err := probe.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("probe")}).FirstErr()
		took := time.Since(sent)
		t.Logf("one acks=all write to partition %d, no retries: %v, after %s", p, err, took.Round(time.Millisecond))
		if !errors.Is(err, kerr.NotEnoughReplicas) || took > tillTimeout/5 {
			t.Errorf("one acks=all write to partition %d: %v after %s, want NOT_ENOUGH_REPLICAS within %s", p, err, took, tillTimeout/5)
		}
	}
	// The till's client retries such a write until its delivery timeout
	// (tillTimeout) and fails it with kgo.ErrRecordTimeout, which does not
	// wrap the broker's last answer.
	if err := brewkit.WaitFor(ctx, 2*tillTimeout, 50*time.Millisecond, func() bool {
		f, _ := till.LastFailure()
		return f.After(at)
	}); err != nil {
		t.Fatalf("no write of the till failed within %s of node 2's stop (placed %d, failed %d)", 2*tillTimeout, till.Placed(), till.Failed())
	}
	failedAt, ferr := till.LastFailure()
	t.Logf("the till's first failure after node 2's stop began came %s after it: %v", failedAt.Sub(at).Round(100*time.Millisecond), ferr)
	if !errors.Is(ferr, kgo.ErrRecordTimeout) || errors.Is(ferr, kerr.NotEnoughReplicas) {
		t.Errorf("the till's write failed with %v, want kgo.ErrRecordTimeout alone (the README says the till's error does not name NOT_ENOUGH_REPLICAS)", ferr)
	}
	if n := till.Placed(); n != placed {
		t.Errorf("the till placed %d orders after node 1 was left alone (%d then, %d now)", n-placed, placed, n)
	}

	// Nothing moved meanwhile: no controller to move it.
	if now, err := describeOn(ctx, cl, 1, topic); err != nil || now.String() != view.String() {
		t.Errorf("%s after node 2's stop began node 1 reports %s (%v), want what it reported %s after: %s", time.Since(at).Round(100*time.Millisecond), now, err, seen.Round(100*time.Millisecond), view)
	}

	// DescribeQuorum names no leader. On a client of its own, bounded:
	// with no controller node 1 does not answer it, and a broker answers
	// a connection's requests in order, so the test's would wait behind it.
	qcl, err := brewkit.NewClient(env.Config, kgo.AlwaysRetryEOF())
	if err != nil {
		t.Fatal(err)
	}
	defer qcl.Close()
	qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
	q, qerr := brewkit.DescribeQuorum(qctx, qcl)
	qcancel()
	t.Logf("DescribeQuorum: leader %d, %v", q.LeaderID, qerr)
	if qerr == nil && q.LeaderID >= 0 {
		t.Errorf("DescribeQuorum names node %d the leader with nodes 2 and 3 stopped", q.LeaderID)
	}
	t.Logf("the step reproduced in %s", time.Since(began).Round(100*time.Millisecond))
}

// activeControllerCount reads the ActiveControllerCount a node's metrics
// port serves ("?" when it does not answer).
func activeControllerCount(ctx context.Context, port int) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics", nil)
	if err != nil {
		return "? " + err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "? " + err.Error()
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "kafka_controller_kafkacontroller_activecontrollercount "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "? no kafka_controller_kafkacontroller_activecontrollercount"
}

// partView is a partition as DescribeTopicPartitions reports it.
type partView struct {
	Partition         int32
	Leader            int32
	ISR, ELR, LastELR []int32
	Err               error
}

func (p partView) String() string {
	s := fmt.Sprintf("%d: leader %d isr %v elr %v", p.Partition, p.Leader, p.ISR, p.ELR)
	if len(p.LastELR) > 0 {
		s += fmt.Sprintf(" last-known-elr %v", p.LastELR)
	}
	if p.Err != nil {
		s += " (" + p.Err.Error() + ")"
	}
	return s
}

type views []partView

func (v views) String() string {
	var s []string
	for _, p := range v {
		s = append(s, p.String())
	}
	return strings.Join(s, "; ")
}

func (v views) everywhere(f func(partView) bool) bool {
	return len(v) > 0 && !slices.ContainsFunc(v, func(p partView) bool { return !f(p) })
}

// describeOn asks node for topic's partitions with DescribeTopicPartitions
// (KIP-966: the request that returns the ELR); node -1 is any broker.
func describeOn(ctx context.Context, cl *kgo.Client, node int, topic string) (views, error) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 100
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = topic
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var resp *kmsg.DescribeTopicPartitionsResponse
	var err error
	if node < 0 {
		resp, err = req.RequestWith(rctx, cl)
	} else {
		var r kmsg.Response
		if r, err = cl.Broker(node).Request(rctx, req); err == nil {
			resp = r.(*kmsg.DescribeTopicPartitionsResponse)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("DescribeTopicPartitions: %w", err)
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("DescribeTopicPartitions: %d topics in the answer", len(resp.Topics))
	}
	rt2 := resp.Topics[0]
	if err := kerr.ErrorForCode(rt2.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeTopicPartitions %s: %w", topic, err)
	}
	var out views
	for _, p := range rt2.Partitions {
		out = append(out, partView{
			Partition: p.Partition,
			Leader:    p.LeaderID,
			ISR:       slices.Sorted(slices.Values(p.ISR)),
			ELR:       slices.Sorted(slices.Values(p.EligibleLeaderReplicas)),
			LastELR:   slices.Sorted(slices.Values(p.LastKnownELR)),
			Err:       kerr.ErrorForCode(p.ErrorCode),
		})
	}
	slices.SortFunc(out, func(a, b partView) int { return int(a.Partition - b.Partition) })
	return out, nil
}

// waitView describes topic on node until done holds, for up to 30 s.
func waitView(ctx context.Context, t *testing.T, cl *kgo.Client, node int, topic, what string, done func(views) bool) views {
	t.Helper()
	var last views
	var lastErr error
	if err := brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		last, lastErr = describeOn(ctx, cl, node, topic)
		return lastErr == nil && done(last)
	}); err != nil {
		t.Fatalf("%s: not within 30 s; last seen %s (%v)", what, last, lastErr)
	}
	return last
}

func configValue(c kadm.ResourceConfig, name string) string {
	for _, e := range c.Configs {
		if e.Key == name {
			return e.MaybeValue()
		}
	}
	return ""
}
