package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A test that stops a node leaves the stand as it found it: the node back,
// every ISR whole, and every partition led by its preferred replica again,
// __consumer_offsets' included. Left to the controller, the leaders move
// back when its imbalance check comes round (every 5 minutes), in the
// middle of a later test: in a CI run a group coordinator moved that way
// while a test waited out a killed member's 6 s session, and the new
// coordinator gave the dead member a new session, 11.8 s in all.
func TestStopLeavesPreferredLeadersAfterItAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	adm := env.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("stop and start node 1", func(t *testing.T) {
		nodes := env.NodeControl(t)
		if err := nodes.StopNode(ctx, 1, false); err != nil {
			t.Fatal(err)
		}
		if err := nodes.StartNode(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// Node 1's leaderships moved away at its controlled shutdown and
		// stay away: what the restore at the test's end must undo.
		if off := notPreferred(ctx, t, adm); len(off) == 0 {
			t.Fatal("no partition off its preferred leader after node 1 stopped: nothing to restore")
		} else {
			t.Logf("after node 1 stopped and started, %d partitions are led by another replica than their preferred one, e.g. %s", len(off), off[0])
		}
	})

	if off := notPreferred(ctx, t, adm); len(off) > 0 {
		t.Fatalf("after the restore, %d partitions are still led by another replica than their preferred one: %v", len(off), off)
	}
}

// notPreferred lists the partitions off their preferred leader, failing the
// test when the cluster does not answer.
func notPreferred(ctx context.Context, t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	off := brewtest.Partitions(ctx, adm, brewtest.NotPreferred)
	if len(off) == 1 && strings.HasPrefix(off[0], "? ") {
		t.Fatalf("listing the partitions: %s", off[0])
	}
	return off
}
