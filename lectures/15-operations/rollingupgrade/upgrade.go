// Package upgrade rolls a cluster from the previous minor release of Kafka to
// the course's, one node at a time, under acks=all traffic, as an operator
// upgrades a production cluster: each node is stopped (a controlled
// shutdown hands its leaderships over), started on the new jars, and waited
// for until it is a broker again and every ISR is full; only then the next.
// The metadata.version stays the old release's until every node runs the new
// one; then UpdateFeatures finalizes the new level, and from there the
// cluster refuses to go back.
//
// It runs on a lab cluster of its own (package lab): the course stand's
// storage, formatted by Kafka 4.4, does not start on 4.3.
package rollingupgrade

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/15-operations/witness"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/15-operations/features"
	"github.com/brew-course/kafka/lectures/15-operations/lab"
)

// From is the release the lab starts on: the minor before the course's.
const From = stand.PreviousVersion

// To is the course's release.
const To = stand.KafkaVersion

// Roll is one node's upgrade.
type Roll struct {
	Node int32 `json:"node"`
	// Before and After are the newest metadata.version the node supports,
	// from its ApiVersions answer: what tells a 4.3 node from a 4.4 one.
	Before string `json:"before"`
	After  string `json:"after"`
	// Back is from the stop to the node registered again as a broker,
	// Full to every ISR of the witness' topic full again.
	Back time.Duration `json:"back"`
	Full time.Duration `json:"full"`
}

// Result is the whole upgrade.
type Result struct {
	Rolls     []Roll         `json:"rolls"`
	Finalized string         `json:"finalized_before"` // metadata.version while the nodes roll
	Final     string         `json:"finalized_after"`  // after UpdateFeatures
	Finalize  string         `json:"finalize"`         // UpdateFeatures' answer
	Downgrade string         `json:"downgrade"`        // the validate-only downgrade's answer
	Refused   bool           `json:"refused"`          // the downgrade was refused
	Witness   witness.Report `json:"witness"`
}

// Run rolls a lab cluster of three nodes from From to To with a witness
// writing rate orders a second and reading them back.
func Run(ctx context.Context, s *stand.Stand, rate int, say func(string)) (res Result, err error) {
	if _, err := s.ReleaseJars(ctx, From); err != nil {
		return res, err
	}
	l, err := lab.New(ctx, s, 3, say)
	if err != nil {
		return res, err
	}
	defer l.Close()
	r := &run{l: l, topic: "brew.ops.upgrade-orders", say: say}
	if err := r.startOnFrom(ctx); err != nil {
		return res, err
	}
	if r.cl, err = brewkit.NewClient(l.Config()); err != nil {
		return res, err
	}
	defer r.cl.Close()
	r.adm = kadm.NewClient(r.cl)
	if r.fs, err = features.Describe(ctx, r.cl, features.Options{}); err != nil {
		return res, err
	}
	res.Finalized = finalized(r.fs)
	say(fmt.Sprintf("lab: metadata.version %s finalized", res.Finalized))

	w, err := r.startWitness(ctx, rate)
	if err != nil {
		return res, err
	}
	defer func() {
		if res.Witness.Sent == 0 {
			res.Witness = w.Stop(time.Minute)
		}
	}()

	// One node at a time: the next only once this one is back with every
	// ISR full.
	for _, n := range l.Voters {
		rl, err := r.roll(ctx, n)
		if err != nil {
			return res, err
		}
		res.Rolls = append(res.Rolls, rl)
	}

	// Every node runs To: finalize the newest level all of them support.
	mv, _ := r.fs.Feature(features.MetadataVersion)
	res.Finalize = answer(finalize(ctx, r.cl, mv.UpgradeTo))
	fs, err := features.Describe(ctx, r.cl, features.Options{CheckDowngrade: true})
	if err != nil {
		return res, err
	}
	res.Final = finalized(fs)
	say(fmt.Sprintf("UpdateFeatures metadata.version %s -> %s: %s", res.Finalized, features.LevelString(features.MetadataVersion, mv.UpgradeTo), res.Finalize))
	if fs.Downgrade != nil {
		res.Downgrade, res.Refused = fs.Downgrade.Answer, fs.Downgrade.Asked && !fs.Downgrade.Accepted
	}
	res.Witness = w.Stop(time.Minute)
	say("witness: " + res.Witness.String())
	return res, nil
}

// run is what one Run's steps share: the lab, a client of its brokers, the
// witness' topic, and the features the nodes announced when last asked.
type run struct {
	l     *lab.Lab
	cl    *kgo.Client
	adm   *kadm.Client
	topic string
	fs    features.Result
	say   func(string)
}

// startOnFrom formats nodes 1-3 and starts them on From, and waits until
// they are registered brokers.
func (r *run) startOnFrom(ctx context.Context) error {
	for _, n := range r.l.Voters {
		r.l.Version[n] = From
	}
	r.say(fmt.Sprintf("lab: nodes 1-3 on Kafka %s (broker + controller), clients on %s-%d", From, lab.Addr(1), lab.ClientBase+3))
	if err := r.l.FormatVoters(ctx); err != nil {
		return err
	}
	for _, n := range r.l.Voters {
		if err := r.l.Start(ctx, n); err != nil {
			return err
		}
	}
	return r.l.WaitBrokers(ctx, 2*time.Minute)
}

// startWitness creates the witness' topic on the lab, six partitions of
// three replicas, and starts the witness writing rate orders a second to it
// and reading them back.
func (r *run) startWitness(ctx context.Context, rate int) (*witness.Witness, error) {
	if _, err := r.adm.CreateTopic(ctx, 6, 3, nil, r.topic); err != nil {
		return nil, fmt.Errorf("creating %s on the lab: %w", r.topic, err)
	}
	if err := brewkit.WaitTopics(ctx, r.adm, r.topic); err != nil {
		return nil, err
	}
	return witness.Start(ctx, r.l.Config(), r.topic, rate)
}

// roll upgrades node n: stopped (SIGTERM: a controlled shutdown hands its
// leaderships over), started on To's jars, and waited for until it is a
// broker again and every ISR of the witness' topic is full; then its
// ApiVersions answer tells what it supports now.
func (r *run) roll(ctx context.Context, n int32) (Roll, error) {
	rl := Roll{Node: n, Before: supports(r.fs, n)}
	r.say(fmt.Sprintf("node %d: stopping (SIGTERM: a controlled shutdown), starting it on Kafka %s", n, To))
	start := time.Now()
	r.l.Stop(n)
	r.l.Version[n] = To
	if err := r.l.Start(ctx, n); err != nil {
		return rl, err
	}
	if err := r.l.WaitBroker(ctx, 2*time.Minute, n); err != nil {
		return rl, err
	}
	rl.Back = time.Since(start)
	if err := fullISR(ctx, r.adm, r.topic); err != nil {
		return rl, err
	}
	rl.Full = time.Since(start)
	// The node's ApiVersions, once the client has reconnected to it.
	if err := brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
		var err error
		r.fs, err = features.Describe(ctx, r.cl, features.Options{})
		return err == nil && supports(r.fs, n) != "?"
	}); err != nil {
		return rl, fmt.Errorf("node %d did not answer ApiVersions after its restart: %w", n, err)
	}
	rl.After = supports(r.fs, n)
	r.say(fmt.Sprintf("node %d: back in %s, every ISR full in %s; it supports metadata.version up to %s (it did up to %s)",
		n, rl.Back.Round(100*time.Millisecond), rl.Full.Round(100*time.Millisecond), rl.After, rl.Before))
	return rl, nil
}

// fullISR waits up to two minutes for every partition of topic to have all
// its replicas in sync.
func fullISR(ctx context.Context, adm *kadm.Client, topic string) error {
	err := brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || td.Error() != nil {
			return false
		}
		for _, p := range td[topic].Partitions {
			if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%s's ISRs not full within 2 minutes: %w", topic, err)
	}
	return nil
}

// finalize asks UpdateFeatures to raise metadata.version to level, as
// `kafka-features upgrade --metadata` does.
func finalize(ctx context.Context, cl *kgo.Client, level int16) error {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.TimeoutMillis = 30_000
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature = features.MetadataVersion
	u.MaxVersionLevel = level
	u.UpgradeType = 1 // UPGRADE
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	rctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, cl)
	if err != nil {
		return err
	}
	if err := kafkaErr(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return err
	}
	for _, r := range resp.Results {
		if err := kafkaErr(r.ErrorCode, r.ErrorMessage); err != nil {
			return fmt.Errorf("%s: %w", r.Feature, err)
		}
	}
	return nil
}

// kafkaErr is Kafka's error code with its message, nil for none.
func kafkaErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil || msg == nil || *msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, *msg)
}
