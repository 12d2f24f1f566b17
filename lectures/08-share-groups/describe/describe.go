// Package describe shows a share group as the cluster sees it: its state,
// members and their assignments, and per partition the share-partition start
// offset (everything before it is done) and the lag behind the log end.
package describe

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
	"github.com/brew-course/kafka/lectures/08-share-groups/queue"
)

// Member is one member of the group.
type Member struct {
	ID       string  `json:"member_id"`
	ClientID string  `json:"client_id"`
	Host     string  `json:"host"`
	Assigned []int32 `json:"partitions"`
}

// Partition is one partition the group reads.
type Partition struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"start_offset"`
	Lag         int64  `json:"lag"`
}

// Group is the description.
type Group struct {
	Name       string      `json:"group"`
	State      string      `json:"state"`
	Epoch      int32       `json:"group_epoch"`
	Assignor   string      `json:"assignor"`
	Members    []Member    `json:"members"`
	Partitions []Partition `json:"partitions"`
}

// Describe asks the cluster about share group name.
func Describe(ctx context.Context, adm *kadm.Client, name string) (Group, error) {
	g := Group{Name: name}
	described, err := adm.DescribeShareGroups(ctx, name)
	if err != nil {
		return g, fmt.Errorf("describing share group %s: %w", name, err)
	}
	d, ok := described[name]
	if !ok {
		return g, fmt.Errorf("share group %s: not described", name)
	}
	if d.Err != nil {
		return g, fmt.Errorf("share group %s: %w", name, d.Err)
	}
	g.State, g.Epoch, g.Assignor = d.GroupState, d.GroupEpoch, d.Assignor
	for _, m := range d.Members {
		mm := Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
		for _, ps := range m.Assignment {
			for p := range ps {
				mm.Assigned = append(mm.Assigned, p)
			}
		}
		slices.Sort(mm.Assigned)
		g.Members = append(g.Members, mm)
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, name)
	if err != nil {
		return g, fmt.Errorf("share group %s offsets: %w", name, err)
	}
	for _, o := range offs[name].Offsets.Sorted() {
		if o.Err != nil {
			return g, fmt.Errorf("share group %s, %s/%d: %w", name, o.Topic, o.Partition, o.Err)
		}
		g.Partitions = append(g.Partitions, Partition{Topic: o.Topic, Partition: o.Partition, StartOffset: o.StartOffset, Lag: o.Lag})
	}
	return g, nil
}

// Print writes the group.
func (g Group) Print(w io.Writer) {
	fmt.Fprintf(w, "share group %s: state %s, epoch %d, assignor %s, %d members\n\n", g.Name, g.State, g.Epoch, g.Assignor, len(g.Members))
	t := brewkit.NewTable(w, "MEMBER", "CLIENT", "PARTITIONS")
	for _, m := range g.Members {
		t.Row(m.ID, m.ClientID, fmt.Sprint(m.Assigned))
	}
	t.Flush()
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "TOPIC", "PARTITION", "START-OFFSET", "LAG")
	for _, p := range g.Partitions {
		t.Row(p.Topic, p.Partition, p.StartOffset, p.Lag)
	}
	t.Flush()
}

// Demo makes a share group to describe: two members on a fresh 3-partition
// topic take 30 tickets; once every ticket is done, while both members still
// run, it describes the group and calls while with it (to compare with
// Kafka's own tool), then cleans up.
func Demo(ctx context.Context, cfg brewkit.Config, while func(Group) error) (Group, error) {
	var g Group
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return g, err
	}
	defer cl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.tickets.describe.", Partitions: 3})
	if err != nil {
		return g, err
	}
	group := topic
	defer func() {
		drop(ctx) //nolint:errcheck // leftovers are harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, group) //nolint:errcheck // and so is the group
	}()
	if err := groupconfigs.Set(ctx, cl, group, queue.FromEarliest); err != nil {
		return g, err
	}
	const tickets = 30
	if err := queue.Tickets(ctx, cl, topic, tickets); err != nil {
		return g, err
	}
	var mu sync.Mutex
	done := map[int]bool{}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			queue.Serve(cctx, cfg, group, topic, 5, func(r *kgo.Record) kgo.AckStatus { //nolint:errcheck // the lag below tells
				mu.Lock()
				done[queue.Ticket(r)] = true
				mu.Unlock()
				return kgo.AckAccept
			})
		}()
	}
	err = brewkit.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool {
		var derr error
		g, derr = Describe(ctx, adm, group)
		// Each partition's lag, not their sum: Kafka reports -1 for a
		// partition whose lag it does not know yet, and -1 beside a
		// partition one ticket behind sums to 0.
		caughtUp := !slices.ContainsFunc(g.Partitions, func(p Partition) bool { return p.Lag != 0 })
		mu.Lock()
		n := len(done)
		mu.Unlock()
		return derr == nil && g.State == "Stable" && len(g.Members) == 2 && len(g.Partitions) == 3 && caughtUp && n == tickets
	})
	if err != nil {
		return g, fmt.Errorf("share group %s did not settle with two members and every ticket done: %w", group, err)
	}
	if while != nil {
		if err := while(g); err != nil {
			return g, err
		}
	}
	return g, nil
}
