package inventory

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const hint = "the bootstrap list is only where a client starts: every broker answers a Metadata request with the cluster id " +
	"and all registered brokers (node id, advertised host and port, rack); ask the cluster, not the client's own view (lecture 01: the course stand)"

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	md, err := kadm.NewClient(env.Client(t)).BrokerMetadata(kadm.WithAuthorizedOps(ctx))
	if err != nil {
		t.Fatalf("asking the cluster for its metadata: %v", err)
	}
	want := Cluster{ID: md.Cluster}
	for _, b := range md.Brokers {
		br := Broker{ID: b.NodeID, Addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		want.Brokers = append(want.Brokers, br)
	}
	slices.SortFunc(want.Brokers, func(a, b Broker) int { return int(a.ID - b.ID) })

	for _, seed := range env.Config.Brokers {
		cfg := env.Config
		cfg.Brokers = []string{seed}
		cl, err := brewkit.NewClient(cfg) // new, and it knows one address
		if err != nil {
			t.Fatal(err)
		}
		var got Cluster
		bounded(t, ctx, 10*time.Second, hint, "Inventory", func(ctx context.Context) { got, err = Inventory(ctx, cl) })
		cl.Close()
		grade.Failed(t, err, hint, fmt.Sprintf("Inventory on a client bootstrapped with %s returned an error", seed))
		if got.ID != want.ID {
			grade.Fail(t, hint, "on a client bootstrapped with %s: cluster id %q; the cluster's id is %q", seed, got.ID, want.ID)
		}
		if len(got.Brokers) != len(want.Brokers) {
			grade.Fail(t, hint, "on a client bootstrapped with %s: %d broker(s) %v; the cluster has %d: %v",
				seed, len(got.Brokers), got.Brokers, len(want.Brokers), want.Brokers)
		}
		for i, b := range got.Brokers {
			if b != want.Brokers[i] {
				grade.Fail(t, hint, "on a client bootstrapped with %s: broker %d of your list is %+v; the cluster says %+v (sorted by node id)",
					seed, i+1, b, want.Brokers[i])
			}
		}
	}
}

// bounded calls f with a context that ends after limit, and fails the
// grading when f has not returned shortly after: code that ignores its
// context must not hang the grader.
func bounded(t *testing.T, parent context.Context, limit time.Duration, hint, what string, f func(context.Context)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	select {
	case <-done:
	case <-time.After(limit + 2*time.Second):
		grade.Fail(t, hint, "%s did not return within %s", what, limit)
	}
}
