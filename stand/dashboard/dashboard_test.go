package dashboard

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// A fixed snapshot drawn on an 80 x 22 screen (and a 40 x 12 one): a
// stopped node, a paused one, under-replicated partitions, groups of each
// kind, and on the small screen more rows than fit.
func TestRenderMatchesGolden(t *testing.T) {
	at, _ := time.Parse(time.RFC3339, "2026-11-30T15:04:05Z")
	snap := Snapshot{
		At: at, Stand: "native", Leader: 1, Voters: []int32{1, 2, 3},
		Produce: 1234.5, Consume: 980,
		Nodes: []Node{{1, "up", true}, {2, "stopped", false}, {3, "paused", true}},
		Topics: []Topic{
			{Name: "__consumer_offsets", Partitions: []Partition{{0, 1, []int32{1, 2, 3}, []int32{1, 3}, 0}}},
			{Name: "brew.orders.v1", Partitions: []Partition{
				{0, 1, []int32{1, 2, 3}, []int32{1, 3}, 1200},
				{1, 3, []int32{1, 2, 3}, []int32{1, 3}, 1180},
				{2, 1, []int32{1, 2, 3}, []int32{1, 2, 3}, 1210},
			}},
			{Name: "brew.payments.v1", Partitions: []Partition{{0, -1, []int32{2}, nil, 40}}},
		},
		Groups: []Group{
			{"kitchen", "consumer", "Stable", 3, 12},
			{"baristas", "share", "Stable", 6, 0},
			{"analytics", "classic", "Empty", 0, -1},
		},
		Err: "quorum: no answer within 1.5s",
	}
	got := Render(snap, 80, 22, false)
	golden := "testdata/dashboard.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("render differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line %d is %d cells wide: %q", i+1, len([]rune(l)), l)
		}
	}
	if n := strings.Count(got, "\n"); n > 22 {
		t.Errorf("%d lines on a 22-line screen", n)
	}
	// A smaller screen: the rows that do not fit are counted, not drawn.
	small := Render(snap, 40, 12, false)
	if n := strings.Count(small, "\n"); n != 12 {
		t.Errorf("%d lines on a 12-line screen:\n%s", n, small)
	}
	if !strings.Contains(small, "more lines: enlarge the terminal") {
		t.Errorf("no note of the hidden rows:\n%s", small)
	}
}

// The model against a real stand: a stopped node shows within 2 s, then the
// partitions it held in sync go under-replicated; a paused node shows as
// paused; all back afterwards.
func TestSnapshotFollowsTheStandAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	if env.Sim != nil {
		env.RequireReal(t) // node processes need a stand: make test-real
	}
	nodes := env.NodeControl(t)
	topic := env.FreshTopic(t, "dash", 3)
	s := env.Stand(t)
	cl := env.Client(t)
	ctx := context.Background()

	first := Collect(ctx, s, cl, nil)
	if len(first.Nodes) != 3 || first.Leader < 1 {
		t.Fatalf("first snapshot: nodes %+v, leader %d (%s)", first.Nodes, first.Leader, first.Err)
	}
	for _, n := range first.Nodes {
		if n.State != "up" || !n.Registered {
			t.Fatalf("node %d: %s, registered %v", n.ID, n.State, n.Registered)
		}
	}
	if tp := find(first, topic); tp == nil || len(tp.Partitions) != 3 || tp.UnderReplicated() != 0 {
		t.Fatalf("topic %s: %+v", topic, tp)
	}

	if err := nodes.StopNode(ctx, 3, false); err != nil {
		t.Fatal(err)
	}
	took := brewtest.Eventually(t, 2*time.Second, "the snapshot shows node 3 stopped", func() (bool, string) {
		snap := Collect(ctx, s, cl, nil)
		return nodeState(snap, 3) == "stopped", nodeState(snap, 3)
	})
	t.Logf("node 3 shown stopped %s after stop-node returned", took.Round(time.Millisecond))
	brewtest.Eventually(t, 30*time.Second, "partitions of "+topic+" under-replicated", func() (bool, string) {
		snap := Collect(ctx, s, cl, nil)
		tp := find(snap, topic)
		return tp != nil && tp.UnderReplicated() == 3 && strings.Contains(Render(snap, 0, 0, false), "! "+topic),
			Render(snap, 0, 0, false)
	})
	if err := nodes.StartNode(ctx, 3); err != nil {
		t.Fatal(err)
	}

	if err := nodes.PauseNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	brewtest.Eventually(t, 10*time.Second, "the snapshot shows node 2 paused", func() (bool, string) {
		snap := Collect(ctx, s, cl, nil)
		return nodeState(snap, 2) == "paused", nodeState(snap, 2)
	})
	if err := nodes.ResumeNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	brewtest.Eventually(t, 60*time.Second, "all three up and in sync again", func() (bool, string) {
		snap := Collect(ctx, s, cl, nil)
		tp := find(snap, topic)
		ok := tp != nil && tp.UnderReplicated() == 0
		for _, id := range []int32{1, 2, 3} {
			ok = ok && nodeState(snap, id) == "up"
		}
		return ok, Render(snap, 0, 0, false)
	})
}

func find(s Snapshot, topic string) *Topic {
	for i := range s.Topics {
		if s.Topics[i].Name == topic {
			return &s.Topics[i]
		}
	}
	return nil
}

func nodeState(s Snapshot, id int32) string {
	for _, n := range s.Nodes {
		if n.ID == id {
			return n.State
		}
	}
	return "missing"
}
