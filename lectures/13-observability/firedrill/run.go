package firedrill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Exporters start what Prometheus scrapes beside the nodes, for the drill's
// group: the lag exporter (job brew-lag) and the service's /metrics (job
// brew-apps, m). They serve until ctx ends.
type Exporters func(ctx context.Context, cfg brewkit.Config, group string, m *kitchen.Metrics) error

// poll is how often the drill reads Prometheus' alerts.
const poll = time.Second

// tillTimeout bounds a record of the drill's till: a write the cluster cannot
// take fails after it, so the quorum step's produce errors show within
// seconds rather than after the course's 30 s.
const tillTimeout = 10 * time.Second

// Run runs the drill on the stand behind nodes. On return every node it
// stopped or froze runs again, or the error says which does not.
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, serve Exporters, o Options) (*Report, error) {
	say := o.Progress
	if say == nil {
		say = func(string) {}
	}
	prom := NewProm(o.Prometheus)
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	if sim, err := brewkit.IsSimulated(ctx, cl); err != nil {
		return nil, err
	} else if sim {
		return nil, errors.New("the fire drill needs real Kafka, and this is the embedded simulation: its nodes have no JVM metrics and no quorum to lose (make down && make up STAND=native)")
	}

	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.obs.drill.", Partitions: 3})
	if err != nil {
		return nil, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover goes with make reset-lecture L=13
	group := topic
	defer func() {
		// The group goes with its topic (make reset-lecture L=13 takes a
		// leftover of an interrupted drill).
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, group) //nolint:errcheck // best effort, as above
	}()
	all, err := pick(o.Steps, steps(group))
	if err != nil {
		return nil, err
	}
	if err := preflight(ctx, prom, all); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(all, func(s Step) bool { return s.Name == "node" }) {
		// A partition whose only replica is on node 3 goes offline with it:
		// what BrewOfflinePartitions is for.
		drop1, err := offlineTopic(ctx, cl, adm, topic+".rf1")
		if err != nil {
			return nil, err
		}
		defer drop1(ctx) //nolint:errcheck // as above
	}

	d := &run{cfg: cfg, nodes: nodes, adm: adm, m: kitchen.NewMetrics(), topic: topic, group: group, say: say}
	stopTraffic, err := d.startTraffic(ctx, serve, o.Rate)
	defer stopTraffic()
	if err != nil {
		return nil, err
	}

	rep := &Report{Group: group, Topic: topic, Started: time.Now()}
	say(fmt.Sprintf("traffic: the till places %d orders a second on %s, the kitchen cooks them (group %s)", o.Rate, topic, group))
	if err := healthy(ctx, prom, rep, group, o.Healthy, d.till, say); err != nil {
		return rep, err
	}
	for _, st := range all {
		res, err := d.step(ctx, prom, st, o)
		rep.Steps = append(rep.Steps, res)
		if err != nil {
			return rep, err
		}
	}
	d.finish(ctx, prom, rep)
	return rep, nil
}

// startTraffic serves the kitchen's metrics, starts the kitchen and the
// till; stop stops what started.
func (d *run) startTraffic(ctx context.Context, serve Exporters, rate int) (stop func(), err error) {
	sctx, stopServing := context.WithCancel(ctx)
	stop = func() {
		if d.till != nil {
			d.till.Close()
		}
		if d.kitchen != nil {
			d.kitchen.Stop() //nolint:errcheck // the drill's result is told
		}
		stopServing()
	}
	if err := serve(sctx, d.cfg, d.group, d.m); err != nil {
		return stop, err
	}
	if err := d.startKitchen(ctx); err != nil {
		return stop, err
	}
	tcfg := d.cfg
	tcfg.Timeout = tillTimeout
	d.till, err = kitchen.StartTill(ctx, tcfg, d.m, d.topic, rate, 0)
	return stop, err
}

// finish stops the till, waits for the kitchen to cook what it placed, and
// reads the group's lag over the drill from Prometheus.
func (d *run) finish(ctx context.Context, prom *Prom, rep *Report) {
	d.till.Stop()
	rep.Placed, rep.Failed = d.till.Placed(), d.till.Failed()
	if d.kitchen != nil {
		// The kitchen cooks what the till placed before the report.
		_ = brewkit.WaitFor(ctx, kitchen.Drain, 100*time.Millisecond, func() bool { return d.kitchen.Cooked() >= rep.Placed })
		rep.Cooked = d.cookedBefore + d.kitchen.Cooked()
	}
	rep.Duration = time.Since(rep.Started)
	lag, err := prom.QueryRange(ctx, fmt.Sprintf("sum(brew_group_lag_records{group=%q})", d.group), rep.Started, time.Now(), 5*time.Second)
	if err == nil && len(lag) == 1 {
		rep.Lag = lag[0].Points
	}
}

// preflight checks that Prometheus runs with the course's rules and scrapes
// the three nodes.
func preflight(ctx context.Context, prom *Prom, all []Step) error {
	loaded, err := prom.AlertRules(ctx)
	if err != nil {
		return err
	}
	for _, st := range all {
		for _, e := range st.Expect {
			if !slices.Contains(loaded, e.Alert) {
				return fmt.Errorf("Prometheus has no alert %s: it runs without the course's rules (lectures/13-observability/rules/brew-alerts.yml); restart it: make services-down S=prometheus && make services-up S=prometheus", e.Alert)
			}
		}
	}
	err = brewkit.WaitFor(ctx, 30*time.Second, poll, func() bool {
		ts, err := prom.Targets(ctx)
		if err != nil {
			return false
		}
		up := 0
		for _, t := range ts {
			if t.Job == "kafka" && t.Up {
				up++
			}
		}
		return up == 3
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("Prometheus does not scrape all three nodes' metrics (127.0.0.1:17071-17073) after 30 s: a stand started before lecture 13's metrics needs a restart (make down && make up), and `make status` shows each node's metrics address")
	}
	return err
}

// offlineTopic creates a one-partition topic whose only replica is on node
// 3 (kadm's CreateTopic takes a count and an RF, not an assignment).
func offlineTopic(ctx context.Context, cl *kgo.Client, adm *kadm.Client, name string) (func(context.Context) error, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, []int32{3}
	t.ReplicaAssignment = append(t.ReplicaAssignment, a)
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "min.insync.replicas", ptr("1")
	t.Configs = append(t.Configs, c)
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10_000
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Topics) == 1 {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s on node 3 alone: %w", name, err)
	}
	drop := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, err := adm.DeleteTopic(ctx, name)
		return err
	}
	if err := brewkit.WaitTopics(ctx, adm, name); err != nil {
		drop(ctx) //nolint:errcheck // the wait's error is told
		return nil, err
	}
	return drop, nil
}

func ptr(s string) *string { return &s }

// settle bounds how long the drill waits for an alert left by what ran
// before it to resolve.
const settle = 2 * time.Minute

// produceErrorsWindow is how long a failed write keeps BrewProduceErrors
// firing: its rate looks a minute back, and Prometheus sees the failure
// within a scrape and an evaluation (5 s each).
const produceErrorsWindow = time.Minute + 10*time.Second

// healthy waits for the group's lag to reach Prometheus and for no alert of
// ours to be active, then watches the alerts for d: none of ours may fire.
func healthy(ctx context.Context, prom *Prom, rep *Report, group string, d time.Duration, till *kitchen.Till, say func(string)) error {
	q := fmt.Sprintf("brew_group_lag_records{group=%q}", group)
	if err := brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool {
		s, err := prom.Query(ctx, q)
		return err == nil && len(s) > 0
	}); err != nil {
		return fmt.Errorf("Prometheus has no lag of group %s after 60 s: is the lag exporter on 127.0.0.1:17080 scraped (job brew-lag in stand/services/prometheus.yml)? %w", group, err)
	}
	// A fault just before the drill (a test that stopped a node and
	// started it again) leaves its alert firing until the replicas have
	// caught up and Prometheus has evaluated that: wait for it to resolve,
	// then start the healthy minute. A write of the till that failed
	// meanwhile (a node just started is still catching up) may not have
	// reached an alert yet: wait until it is out of the alert's window too.
	var left string
	told := false
	tell := func() {
		if !told {
			say("before the healthy minute, waiting: " + left)
			told = true
		}
	}
	if err := brewkit.WaitFor(ctx, settle, poll, func() bool {
		if at, err := till.LastFailure(); !at.IsZero() && time.Since(at) < produceErrorsWindow {
			left = fmt.Sprintf("a write of the till failed %s ago (%v)", time.Since(at).Round(time.Second), err)
			tell()
			return false
		}
		alerts, err := prom.Alerts(ctx)
		if err != nil {
			return false
		}
		left = ""
		for _, a := range alerts {
			if ours(a, group) {
				left = "alert " + a.Name + labelsNote(a) + " is still " + a.State
				tell()
				return false
			}
		}
		return true
	}); err != nil {
		if left == "" {
			return err
		}
		return fmt.Errorf("%s, %s after the drill started: the drill needs a whole stand (make restore, make status)", left, settle)
	}
	say(fmt.Sprintf("healthy: %s of traffic, no alert may fire (BrewGroupLagGrowing compares with a minute ago, so it needs the minute)", d))
	start := time.Now()
	for time.Since(start) < d {
		alerts, err := prom.Alerts(ctx)
		if err != nil {
			return err
		}
		for _, a := range alerts {
			if a.State == "firing" && ours(a, group) {
				err := fmt.Errorf("alert %s%s fires on the healthy stand before any fault: the drill needs a whole stand (make restore, make status)", a.Name, labelsNote(a))
				if n := till.Failed(); n > 0 {
					err = fmt.Errorf("%w; %d of the till's writes failed, the last with: %v", err, n, till.LastErr())
				}
				return err
			}
		}
		if err := brewkit.Sleep(ctx, poll); err != nil {
			return err
		}
	}
	rep.Healthy = time.Since(start)
	return nil
}

// step breaks, waits for the expected alerts to fire, fixes, and waits for
// them to resolve and for no alert of ours to be left.
func (d *run) step(ctx context.Context, prom *Prom, st Step, o Options) (StepResult, error) {
	res := StepResult{Step: st}
	for _, e := range st.Expect {
		res.Timings = append(res.Timings, Timing{Expect: e})
	}
	if err := whole(ctx, d.adm, d.say); err != nil {
		return res, fmt.Errorf("step %s: %w", st.Name, err)
	}
	d.say(fmt.Sprintf("step %s: %s", st.Name, st.Fault))
	res.FaultAt = time.Now()
	if err := st.break_(ctx, d); err != nil {
		return res, fmt.Errorf("step %s: %w", st.Name, err)
	}
	if err := d.waitFiring(ctx, prom, &res, o.FireIn); err != nil {
		return res, err
	}

	d.say(fmt.Sprintf("step %s: fix: %s", st.Name, st.Fix))
	res.FixAt = time.Now()
	if err := st.fix(ctx, d); err != nil {
		return res, fmt.Errorf("step %s: the fix: %w", st.Name, err)
	}
	res.FixedIn = time.Since(res.FixAt)
	err := d.waitResolved(ctx, prom, &res, o.ResolveIn)
	return res, err
}
