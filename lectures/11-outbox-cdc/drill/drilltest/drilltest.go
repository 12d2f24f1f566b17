// Package drilltest is what lecture 11's node-kill tests share: a Kafka
// node killed -9 while a producer of the outbox runs, and what reached the
// topic counted against what committed.
package drilltest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Outage is what NodeOutage did.
type Outage struct {
	Node  int32         // the node killed: partition 0's leader
	Moved time.Duration // from the kill until no partition of the topic was led by it
	Down  time.Duration // from the kill until it was started again
}

// NodeOutage kills -9 the node that leads partition 0 of topic, waits until
// every partition of topic is led by another node, calls during (which
// waits for what must happen while the node is down), and starts the node
// again.
func NodeOutage(t *testing.T, env *brewtest.Env, nodes brewkit.NodeControl, topic string, during func()) Outage {
	t.Helper()
	ctx := context.Background()
	adm := env.Admin(t)
	leaders := func() map[int32]int32 {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || td.Error() != nil {
			return nil
		}
		out := map[int32]int32{}
		for _, p := range td[topic].Partitions {
			out[p.Partition] = p.Leader
		}
		return out
	}
	var o Outage
	brewtest.Eventually(t, 30*time.Second, "partition 0 of "+topic+" has a leader", func() (bool, string) {
		l := leaders()
		o.Node = l[0]
		return o.Node > 0, fmt.Sprint(l)
	})
	killed := time.Now()
	require.NoError(t, nodes.StopNode(ctx, int(o.Node), true))
	t.Logf("node %d (partition 0's leader) killed -9", o.Node)
	o.Moved = brewtest.Eventually(t, 60*time.Second, "every partition led by another node", func() (bool, string) {
		l := leaders()
		for _, n := range l {
			if n == o.Node || n < 0 {
				return false, fmt.Sprint(l)
			}
		}
		return len(l) > 0, fmt.Sprint(l)
	})
	t.Logf("the leaders moved off node %d %s after the kill", o.Node, o.Moved.Round(100*time.Millisecond))
	during()
	o.Down = time.Since(killed)
	require.NoError(t, nodes.StartNode(ctx, int(o.Node)))
	t.Logf("node %d started again, %s after the kill", o.Node, o.Down.Round(100*time.Millisecond))
	return o
}

// Orders is order-service writing at a pace in the background: place
// commits order n (its order and outbox row in one transaction) and
// returns its order id.
type Orders struct {
	mu        sync.Mutex
	committed map[string]time.Time // order id: when its COMMIT returned
	n         int
	stop      chan struct{}
	done      chan error
}

// StartOrders calls place for orders 0, 1, ... one every every, until Stop.
// Stop never interrupts a transaction (a COMMIT cut off by a cancelled
// context may have committed, or not): it ends the writes between two.
func StartOrders(ctx context.Context, every time.Duration, place func(ctx context.Context, n int) (string, error)) *Orders {
	o := &Orders{committed: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-o.stop:
				o.done <- nil
				return
			case <-ctx.Done():
				o.done <- ctx.Err()
				return
			case <-tick.C:
			}
			id, err := place(ctx, n)
			if err != nil {
				o.done <- err
				return
			}
			o.mu.Lock()
			o.committed[id] = time.Now()
			o.n++
			o.mu.Unlock()
		}
	}()
	return o
}

// Count is how many orders committed so far.
func (o *Orders) Count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// Stop stops the writes and returns each committed order with its commit time.
func (o *Orders) Stop(t *testing.T) map[string]time.Time {
	t.Helper()
	close(o.stop)
	require.NoError(t, <-o.done, "order-service")
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.committed
}

// Delivered is what reached the topic of a run, against what committed.
type Delivered struct {
	Events, Distinct int // records of the run; distinct event ids among them
	Lost, Invented   []string
}

// Duplicates are the records beyond each event's first.
func (d Delivered) Duplicates() int { return d.Events - d.Distinct }

// Count reads topic from from and counts the run's events against the
// committed orders.
func Count(t *testing.T, env *brewtest.Env, adm *kadm.Client, topic string, from map[int32]int64, run string, committed map[string]time.Time) Delivered {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := drill.Read(ctx, env.Config, adm, topic, from, run)
	require.NoError(t, err)
	var d Delivered
	ids := map[string]bool{}
	byOrder := drill.Count(got)
	for _, g := range got {
		if g.Run != run {
			continue
		}
		d.Events++
		ids[g.ID] = true
	}
	d.Distinct = len(ids)
	for id := range committed {
		if byOrder[id] == 0 {
			d.Lost = append(d.Lost, id)
		}
	}
	for id := range byOrder {
		if _, ok := committed[id]; !ok {
			d.Invented = append(d.Invented, id)
		}
	}
	return d
}
