package crashdrill_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

// Orders flow while the kitchen runs; one node is killed and started again,
// then another is paused until the controller has fenced it
// (broker.session.timeout.ms, 9 s without a heartbeat) and resumed. Every
// order is still cooked exactly once. Should the kitchen give up (a
// transaction that cannot end is not retryable), it is started again, as a
// supervisor would.
func TestExactlyOnceThroughNodeFaultsAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	bin := brewtest.BuildCmdAt(t, "../cmd/kitchen")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	in, out := env.FreshTopic(t, "faults-orders", 3), env.FreshTopic(t, "faults-kitchen", 3)
	adm := env.Admin(t)

	// The kitchen, restarted whenever it exits with an error, until the test
	// has seen every order cooked and stops it with SIGTERM.
	kctx, stopKitchen := context.WithCancel(ctx)
	defer stopKitchen()
	var kitchenDone sync.WaitGroup
	kitchenDone.Add(1)
	var restarts atomic.Int32
	go func() {
		defer kitchenDone.Done()
		for kctx.Err() == nil {
			cmd := exec.CommandContext(kctx, bin, "-in", in, "-out", out, "-group", in, "-id", "kitchen-"+in)
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.Env = append(cmd.Environ(), brewkit.EnvBootstrap+"="+env.Config.Bootstrap())
			outb, err := cmd.CombinedOutput()
			t.Logf("kitchen: %s", outb)
			if kctx.Err() != nil {
				return
			}
			restarts.Add(1)
			t.Logf("kitchen exited: %v; starting it again", err)
		}
	}()

	// Orders, 40 a second, for as long as the faults last.
	cl := env.Client(t)
	pctx, stopOrders := context.WithCancel(ctx)
	var sent, failed atomic.Int64
	var ordersDone sync.WaitGroup
	ordersDone.Add(1)
	go func() {
		defer ordersDone.Done()
		rng := rand.New(rand.NewPCG(3, 3))
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for n := int64(1); pctx.Err() == nil; n++ {
			<-tick.C
			cl.Produce(ctx, brewkit.NewOrder(rng, n, time.Now()).Record(in), func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Add(1)
				}
			})
			sent.Add(1)
		}
	}()

	fullISR := func() bool {
		td, err := adm.ListTopics(ctx, in, out)
		if err != nil {
			return false
		}
		for _, d := range td {
			for _, p := range d.Partitions {
				if len(p.ISR) != 3 {
					return false
				}
			}
		}
		return true
	}
	step := func(format string, args ...any) { t.Logf("fault: "+format, args...) }
	time.Sleep(3 * time.Second) // the pipeline warms up
	step("killing node 2 (SIGKILL)")
	require.NoError(t, nodes.StopNode(ctx, 2, true))
	time.Sleep(5 * time.Second) // the pipeline runs on two nodes
	step("starting node 2")
	require.NoError(t, nodes.StartNode(ctx, 2))
	require.NoError(t, brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, fullISR), "node 2 back in every ISR")
	step("pausing node 3 (SIGSTOP) for 12 s")
	require.NoError(t, nodes.PauseNode(ctx, 3))
	time.Sleep(12 * time.Second) // past broker.session.timeout.ms (9 s): the controller fences node 3, which leaves the ISRs
	step("resuming node 3")
	require.NoError(t, nodes.ResumeNode(ctx, 3))
	time.Sleep(3 * time.Second)
	stopOrders()
	ordersDone.Wait()
	fctx, fcancel := context.WithTimeout(ctx, time.Minute)
	defer fcancel()
	require.NoError(t, cl.Flush(fctx), "the orders were written")
	t.Logf("orders sent %d, failed %d", sent.Load(), failed.Load())
	var rep kitchen.Report
	err := brewkit.WaitFor(ctx, 2*time.Minute, time.Second, func() bool {
		var err error
		rep, err = kitchen.Verify(ctx, env.Config, in, out)
		return err == nil && rep.Orders == int(sent.Load()-failed.Load()) && rep.Missing == 0
	})
	require.NoError(t, err, "the kitchen did not cook every order: %+v", rep)
	stopKitchen()
	kitchenDone.Wait()

	rep, err = kitchen.Verify(ctx, env.Config, in, out)
	require.NoError(t, err)
	t.Logf("%+v (kitchen restarted %d times)", rep, restarts.Load())
	require.Equal(t, int(sent.Load()-failed.Load()), rep.Orders, "every order written is in the input")
	require.True(t, rep.OK(), "exactly once through the faults: %s", fmt.Sprint(rep))
}
