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
package upgrade

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
	"github.com/brew-course/kafka/pkg/brewkit/witness"

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
	for _, n := range l.Voters {
		l.Version[n] = From
	}
	say(fmt.Sprintf("lab: nodes 1-3 on Kafka %s (broker + controller), clients on %s-%d", From, lab.Addr(1), lab.ClientBase+3))
	if err := l.FormatVoters(ctx); err != nil {
		return res, err
	}
	for _, n := range l.Voters {
		if err := l.Start(ctx, n); err != nil {
			return res, err
		}
	}
	if err := l.WaitBrokers(ctx, 2*time.Minute); err != nil {
		return res, err
	}
	cl, err := brewkit.NewClient(l.Config())
	if err != nil {
		return res, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	fs, err := features.Describe(ctx, cl, features.Options{})
	if err != nil {
		return res, err
	}
	res.Finalized = finalized(fs)
	say(fmt.Sprintf("lab: metadata.version %s finalized", res.Finalized))

	topic := "brew.ops.upgrade-orders"
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, topic); err != nil {
		return res, fmt.Errorf("creating %s on the lab: %w", topic, err)
	}
	if err := brewkit.WaitTopics(ctx, adm, topic); err != nil {
		return res, err
	}
	w, err := witness.Start(ctx, l.Config(), topic, rate)
	if err != nil {
		return res, err
	}
	defer func() {
		if res.Witness.Sent == 0 {
			res.Witness = w.Stop(time.Minute)
		}
	}()

	for _, n := range l.Voters {
		r := Roll{Node: n, Before: supports(fs, n)}
		say(fmt.Sprintf("node %d: stopping (SIGTERM: a controlled shutdown), starting it on Kafka %s", n, To))
		start := time.Now()
		l.Stop(n)
		l.Version[n] = To
		if err := l.Start(ctx, n); err != nil {
			return res, err
		}
		if err := l.WaitBroker(ctx, 2*time.Minute, n); err != nil {
			return res, err
		}
		r.Back = time.Since(start)
		if err := fullISR(ctx, adm, topic); err != nil {
			return res, err
		}
		r.Full = time.Since(start)
		// The node's ApiVersions, once the client has reconnected to it.
		if err := brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
			fs, err = features.Describe(ctx, cl, features.Options{})
			return err == nil && supports(fs, n) != "?"
		}); err != nil {
			return res, fmt.Errorf("node %d did not answer ApiVersions after its restart: %w", n, err)
		}
		r.After = supports(fs, n)
		say(fmt.Sprintf("node %d: back in %s, every ISR full in %s; it supports metadata.version up to %s (it did up to %s)",
			n, r.Back.Round(100*time.Millisecond), r.Full.Round(100*time.Millisecond), r.After, r.Before))
		res.Rolls = append(res.Rolls, r)
	}

	// Every node runs To: finalize the newest level all of them support.
	mv, _ := fs.Feature(features.MetadataVersion)
	res.Finalize = answer(finalize(ctx, cl, mv.UpgradeTo))
	if fs, err = features.Describe(ctx, cl, features.Options{CheckDowngrade: true}); err != nil {
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

// finalized is the cluster's metadata.version.
func finalized(fs features.Result) string {
	f, _ := fs.Feature(features.MetadataVersion)
	return features.LevelString(features.MetadataVersion, f.Finalized)
}

// supports is the newest metadata.version node n announced.
func supports(fs features.Result, n int32) string {
	for _, nd := range fs.Nodes {
		if nd.ID == n {
			if r, ok := nd.Supported[features.MetadataVersion]; ok {
				return features.LevelString(features.MetadataVersion, r.Max)
			}
		}
	}
	return "?"
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

func answer(err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return "accepted"
}

// OK says the upgrade went as a rolling upgrade must: every node rolled and
// supports more after, finalize accepted, the downgrade refused, nothing
// lost or duplicated.
func (r Result) OK() bool {
	return len(r.Rolls) == 3 && r.Finalize == "accepted" && r.Refused && r.Witness.OK() &&
		!slices.ContainsFunc(r.Rolls, func(x Roll) bool { return x.Before == x.After })
}

// Print writes the rolls, the finalize and the downgrade, and the witness.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "lab cluster of 3 nodes, Kafka %s -> %s, one node at a time; metadata.version %s meanwhile\n", From, To, r.Finalized)
	t := brewkit.NewTable(w, "NODE", "SUPPORTED BEFORE", "SUPPORTED AFTER", "BROKER AGAIN", "ISR FULL")
	for _, x := range r.Rolls {
		t.Row(x.Node, "up to "+x.Before, "up to "+x.After, x.Back.Round(100*time.Millisecond), x.Full.Round(100*time.Millisecond))
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintf(w, "UpdateFeatures metadata.version -> %s: %s\n", r.Final, r.Finalize)
	fmt.Fprintf(w, "downgrade back, validate only: %s\n", r.Downgrade)
	fmt.Fprintf(w, "witness: sent %d, acknowledged %d, read %d: lost %d, duplicated %d; longest wait for an acknowledgement %s\n",
		r.Witness.Sent, r.Witness.Acked, r.Witness.Read, r.Witness.Lost, r.Witness.Duplicated, r.Witness.LongestGap.Round(10*time.Millisecond))
}
