package retrytopics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/dlt"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
)

// The kill test's run, short for a test: production outages last minutes,
// and its retry delays would be minutes too (see the README).
const (
	killOrders     = 120
	killSeed       = 10                     // the kill points
	killLatency    = 40 * time.Millisecond  // the partner's time per call
	killTimeouts   = 0.1                    // of new bookings made and not answered, before the outage
	killCall       = 300 * time.Millisecond // one booking call's bound
	killHealthy    = time.Second            // from the first courier's assignment to the outage
	killOutage     = 15 * time.Second       //
	killSession    = 6 * time.Second        // group.min.session.timeout.ms, the classic protocol's floor: a killed member's partitions wait this long
	killKills      = 4                      // SIGKILLs, each a seeded 1.5-3.5 s after its instance got partitions
	killDoneWithin = 2 * time.Minute
)

// The retry path outlasts the outage: a record's third try comes at least
// both delays after its first failure.
var killDelays = []time.Duration{5 * time.Second, 20 * time.Second}

// proc is one courier process (retry-topics courier).
type proc struct {
	cmd      *exec.Cmd
	stderr   bytes.Buffer
	assigned chan struct{}
	done     chan struct{}
	err      error
}

func startCourier(ctx context.Context, t *testing.T, cfg brewkit.Config, bin string, args []string) *proc {
	t.Helper()
	cmd := brewkit.Command(ctx, cfg, []string{bin, "courier"}, args...)
	p := &proc{cmd: cmd, assigned: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			var r retrytopics.Report
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.Kind == "assigned" && first {
				first = false
				close(p.assigned)
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // an early end's stop
		<-p.done
	})
	return p
}

func (p *proc) waitAssigned(t *testing.T, limit time.Duration) time.Time {
	t.Helper()
	select {
	case <-p.assigned:
		return time.Now()
	case <-p.done:
		t.Fatalf("the courier process ended before it got partitions: %v %s", p.err, p.stderr.String())
	case <-time.After(limit):
		t.Fatalf("the courier process got no partitions within %s", limit)
	}
	return time.Time{}
}

func (p *proc) wait(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(limit):
		t.Fatalf("the courier process did not end within %s", limit)
	}
	return nil
}

// sleepUntil waits for the moment at, failing the test if p ends first.
func sleepUntil(t *testing.T, p *proc, at time.Time) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("the courier process ended: %v %s", p.err, p.stderr.String())
	case <-time.After(time.Until(at)):
	}
}

func groupLag(ctx context.Context, adm *kadm.Client, group string) (int64, error) {
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		return 0, err
	}
	l := lags[group]
	if err := l.Error(); err != nil {
		return 0, err
	}
	return l.Lag.Total(), nil
}

// Through a partner outage the courier, a process of its own, is killed
// with SIGKILL at seeded random points and started again each time. Per the
// partner's booking log every order is booked exactly once (a repeat of
// what a killed instance left uncommitted is answered with the first
// booking: the idempotency key) and none is lost, and the DLT holds the
// poison records and only them (at least once each: a kill between a dead
// letter and its commit writes it again).
func TestKilledThroughAnOutageBooksEveryOrderOnce(t *testing.T) {
	t.Parallel()
	env := brewtest.Cluster(t)
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	pc := partner.NewClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	topics := retrytopics.Topics{
		Orders: env.FreshTopic(t, "courier-kill-orders", 6),
		Retries: []retrytopics.Stage{
			{Topic: env.FreshTopic(t, "courier-kill-retry.5s", 6), Delay: killDelays[0]},
			{Topic: env.FreshTopic(t, "courier-kill-retry.1m", 6), Delay: killDelays[1]},
		},
		DLT: env.FreshTopic(t, "courier-kill-dlt", 1),
	}
	b := courier.Batch{Topic: topics.Orders, Run: fmt.Sprintf("kill-%06d", rand.IntN(1_000_000)), Orders: killOrders,
		Poison: []int{17, 60, 101}}
	cl := env.Client(t)
	adm := kadm.NewClient(cl)
	require.NoError(t, b.Write(ctx, cl))
	poison := map[string]bool{}
	for _, i := range b.Poison {
		poison[b.IDs[i]] = true
	}
	var orders []string
	for _, id := range b.IDs {
		if !poison[id] {
			orders = append(orders, id)
		}
	}
	_, err = pc.SetFaults(ctx, partner.Faults{Latency: partner.Duration(killLatency), TimeoutAfterBooking: killTimeouts, Seed: 1})
	require.NoError(t, err)

	c := retrytopics.Courier{Topics: topics, Group: b.Group(), SessionTimeout: killSession}
	args := retrytopics.ChildArgs(c, addr, killCall)
	bin := brewtest.BuildCmdAt(t, "../cmd/retry-topics")
	rng := rand.New(rand.NewPCG(killSeed, 0))

	p := startCourier(ctx, t, env.Config, bin, args)
	start := p.waitAssigned(t, 30*time.Second)
	var until time.Time       // when the outage ends, on the partner's clock
	var kills []time.Duration // since the first assignment
	for k := range killKills {
		at := start
		if k > 0 {
			at = p.waitAssigned(t, killSession+30*time.Second)
		}
		at = at.Add(1500*time.Millisecond + time.Duration(rng.Int64N(int64(2*time.Second))))
		if k == 0 { // the outage starts before the first kill
			sleepUntil(t, p, start.Add(killHealthy))
			f, err := pc.SetFaults(ctx, partner.Faults{Latency: partner.Duration(killLatency), OutageFor: partner.Duration(killOutage)})
			require.NoError(t, err)
			until = f.OutageUntil
		}
		sleepUntil(t, p, at)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		kills = append(kills, time.Since(start).Round(100*time.Millisecond))
		err := p.wait(t, 10*time.Second)
		require.True(t, brewkit.Crashed(err), "courier %d ended by SIGKILL, not %v %s", k+1, err, p.stderr.String())
		p = startCourier(ctx, t, env.Config, bin, args)
	}
	require.False(t, until.IsZero(), "the outage started")
	end := until.Sub(start)
	inOutage := 0
	for _, k := range kills {
		if k > killHealthy && k < end {
			inOutage++
		}
	}
	t.Logf("outage from %s to %s after the first courier's assignment; SIGKILLs at %v", killHealthy, end.Round(100*time.Millisecond), kills)
	require.Positive(t, inOutage, "a kill fell in the outage")

	// The last courier books the rest; the run is over once every order is
	// booked and the group has read every topic to its end (a record in a
	// retry topic is written before the record it came from is committed).
	var log partner.Log
	brewtest.Eventually(t, killDoneWithin, "every order booked and every topic read to its end", func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("the last courier ended: %v %s", p.err, p.stderr.String())
		default:
		}
		log, err = pc.Log(ctx)
		if err != nil {
			return false, err.Error()
		}
		times := log.Times()
		missing := 0
		for _, id := range orders {
			if times[id] == 0 {
				missing++
			}
		}
		lag, err := groupLag(ctx, adm, b.Group())
		if err != nil {
			return false, err.Error()
		}
		return missing == 0 && lag == 0, fmt.Sprintf("%d orders not booked, lag %d", missing, lag)
	})
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.wait(t, 15*time.Second), "the last courier stops on SIGTERM: %s", p.stderr.String())

	log, err = pc.Log(ctx)
	require.NoError(t, err)
	times := log.Times()
	for _, id := range orders {
		require.Equal(t, 1, times[id], "order %s: booked exactly once per the partner's log", id)
	}
	require.Len(t, times, len(orders), "the partner booked the orders and nothing else")
	require.Positive(t, log.Calls.TimedOut, "bookings made and not answered before the outage")
	require.Positive(t, log.Calls.Replayed, "repeats of booked orders, answered with their first booking")
	require.Positive(t, log.Calls.Refused, "the outage refused calls")

	ls, _, err := dlt.Read(ctx, env.Config, topics.DLT)
	require.NoError(t, err)
	var keys []string
	for _, l := range ls {
		require.Equal(t, "poison", l.Kind, "%s: only poison records die (%s)", l.Key, l.Error)
		require.True(t, strings.HasPrefix(l.Error, "not an order: "), "%s: %s", l.Key, l.Error)
		require.Equal(t, 1, l.Attempts, "%s", l.Key)
		require.Equal(t, topics.Orders, l.Origin.Topic, "%s", l.Key)
		if !slices.Contains(keys, l.Key) {
			keys = append(keys, l.Key)
		}
	}
	slices.Sort(keys)
	var want []string
	for id := range poison {
		want = append(want, id)
	}
	slices.Sort(want)
	require.Equal(t, want, keys, "the poison records, and only they, are in the DLT")
	orig := originals(t, env, ls)
	for _, l := range ls {
		r := orig[l.Origin]
		require.NotNil(t, r, "%s: no record at its origin %s", l.Key, l.Origin)
		require.Equal(t, l.Key, string(r.Key), "the origin %s is the dead letter's record", l.Origin)
		require.Equal(t, string(r.Value), string(l.Value), "the origin %s is the dead letter's record", l.Origin)
	}
	t.Logf("%d orders (%d poison), %d SIGKILLs (%d in the outage): booked once %d, lost 0; calls %d: booked %d, timed out after booking %d, answered with the first booking %d, refused %d; dead letters %d for %d poison records",
		killOrders, len(poison), len(kills), inOutage, len(orders), log.Calls.Total, log.Calls.Booked, log.Calls.TimedOut,
		log.Calls.Replayed, log.Calls.Refused, len(ls), len(want))
}
