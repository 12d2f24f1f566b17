// Package demo is the instructor's rebalance demo in one terminal: member
// processes m1, m2 and m3 join a group one after another while orders flow,
// then m2 leaves; every member's events are printed as they happen, and after
// each step who owns which partition.
package demorebalance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Partitions is the demo topic's partition count.
const Partitions = 6

// Config is the demo.
type Config struct {
	Member   []string // the command that runs one member process (groups.ServeProcess)
	Protocol groups.Protocol
	Hold     time.Duration // how long each step runs after the group settles
	Rate     int           // orders per second
	Work     time.Duration // time per order
}

// Defaults: cooperative-sticky, 5 s a step, 3 orders a second.
var Defaults = Config{Protocol: groups.Cooperative, Hold: 5 * time.Second, Rate: 3, Work: 100 * time.Millisecond}

// errWrite marks the error of a write that failed.
var errWrite = errors.New("writing orders")

// Step is what the group looked like once a step settled.
type Step struct {
	Title  string             `json:"title"`
	Owners map[string][]int32 `json:"owners"` // member: partitions
}

// Run plays the demo, printing to out.
func Run(ctx context.Context, cfg brewkit.Config, c Config, out io.Writer) ([]Step, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.demo-rebalance.", Partitions: Partitions})
	if err != nil {
		return nil, err
	}
	defer func() {
		drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, topic) //nolint:errcheck // and so is its group
	}()

	d := &demo{cfg: cfg, c: c, topic: topic, out: out, members: map[string]*groups.Process{}}
	defer d.stopAll()

	// Orders flow the whole time. A write that fails ends the demo: the
	// members would wait for orders that never come.
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go d.writeOrders(pctx, cl)

	d.say("group %s on %s (%d partitions, %s), %d orders/s", topic, topic, Partitions, c.Protocol.Label(), c.Rate)
	plan := []struct {
		title string
		do    func() error
	}{
		{"m1 joins", func() error { return d.join("m1") }},
		{"m2 joins", func() error { return d.join("m2") }},
		{"m3 joins", func() error { return d.join("m3") }},
		{"m2 leaves (Ctrl-C: LeaveGroup)", func() error { return d.leave("m2") }},
	}
	var steps []Step
	for i, st := range plan {
		d.say("\n== step %d/%d: %s", i+1, len(plan), st.title)
		if err := st.do(); err != nil {
			return steps, err
		}
		owners, err := d.waitSettled(ctx, st.title)
		if err != nil {
			return steps, err
		}
		steps = append(steps, Step{Title: st.title, Owners: owners})
		if err := d.log.Sleep(ctx, c.Hold); err != nil {
			return steps, err
		}
	}
	d.say("\n== done: stopping m1 and m3")
	return steps, nil
}

// demo is what one Run's steps, its order writer and the members' readers
// share.
type demo struct {
	cfg   brewkit.Config
	c     Config
	topic string // the demo's topic, and its group's name

	mu      sync.Mutex // out is written from the members' readers
	out     io.Writer
	log     groups.Log                 // the members' events; also ends the waits when a member fails
	members map[string]*groups.Process // the live members, by name
}

// writeOrders writes c.Rate orders a second until ctx ends. A write that
// fails ends the demo's waits, with its error.
func (d *demo) writeOrders(ctx context.Context, cl *kgo.Client) {
	written := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil {
			d.log.Fail(fmt.Errorf("%w to %s: %w", errWrite, d.topic, err))
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	tick := time.NewTicker(time.Second / time.Duration(d.c.Rate))
	defer tick.Stop()
	for n := int64(1); ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cl.Produce(ctx, brewkit.NewOrder(rng, n, time.Now()).Record(d.topic), written)
	}
}

// join starts member name as a process of its own: it joins the group, and
// the group rebalances to give it partitions.
func (d *demo) join(name string) error {
	m := groups.Member{Name: name, Group: d.topic, Topic: d.topic, Protocol: d.c.Protocol, Work: d.c.Work}
	p, err := d.log.StartProcess(d.cfg, d.c.Member, m, d.emit)
	if err == nil {
		d.members[name] = p
	}
	return err
}

// leave stops member name with SIGTERM: a clean exit, in which the member
// leaves the group, and the group rebalances its partitions to the others.
func (d *demo) leave(name string) error {
	d.members[name].Stop(syscall.SIGTERM)
	delete(d.members, name)
	return nil
}

// stopAll stops the members still running, each leaving the group.
func (d *demo) stopAll() {
	for _, p := range d.members {
		p.Stop(syscall.SIGTERM)
	}
}
