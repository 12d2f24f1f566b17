package firedrill

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// whole waits until every partition on the stand has a leader and all its
// replicas in sync, so that a step's fault starts from a whole stand: a
// follower still catching up after the step before would turn the next
// fault into another one (a partition whose only in-sync replica is the
// node the step freezes goes offline with it).
func whole(ctx context.Context, adm *kadm.Client, say func(string)) error {
	var left []string
	told := false
	err := brewkit.WaitFor(ctx, settle, poll, func() bool {
		var err error
		left, err = notWhole(ctx, adm)
		if err != nil {
			left = []string{err.Error()}
			return false
		}
		if len(left) > 0 && !told {
			say("  waiting for every replica to be in sync: " + summary(left))
			told = true
		}
		return len(left) == 0
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("the stand is not whole %s after the step before: %s; the drill needs a whole stand (make restore, make status)", settle, summary(left))
	}
	return err
}

// notWhole lists the partitions with no leader or fewer in-sync replicas
// than replicas, as topic/partition leader=L replicas=[..] isr=[..].
func notWhole(ctx context.Context, adm *kadm.Client) ([]string, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var out []string
	for _, td := range md.Topics.Sorted() {
		if td.Err != nil {
			out = append(out, fmt.Sprintf("%s: %v", td.Topic, td.Err))
			continue
		}
		for _, p := range td.Partitions.Sorted() {
			if p.Leader >= 0 && len(p.ISR) == len(p.Replicas) && p.Err == nil {
				continue
			}
			out = append(out, describePartition(p))
		}
	}
	return out, nil
}

// offlineNow lists the partitions that have no leader now: what
// BrewOfflinePartitions counts, to say which when it fires unexpectedly.
func offlineNow(ctx context.Context, adm *kadm.Client) string {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return "metadata: " + err.Error()
	}
	var out []string
	for _, td := range md.Topics.Sorted() {
		for _, p := range td.Partitions.Sorted() {
			if p.Leader < 0 {
				out = append(out, describePartition(p))
			}
		}
	}
	if len(out) == 0 {
		return "no partition without a leader in the metadata now"
	}
	return summary(out)
}

func describePartition(p kadm.PartitionDetail) string {
	s := fmt.Sprintf("%s/%d leader=%d replicas=%v isr=%v", p.Topic, p.Partition, p.Leader, p.Replicas, p.ISR)
	if p.Err != nil {
		s += " (" + p.Err.Error() + ")"
	}
	return s
}

// summary shows the first few of a list and how many more there are.
func summary(l []string) string {
	const most = 5
	if len(l) <= most {
		return strings.Join(l, "; ")
	}
	return strings.Join(slices.Clip(l[:most]), "; ") + fmt.Sprintf("; and %d more", len(l)-most)
}

// unexpectedNote says what the stand looked like when an alert the step
// does not expect fired: for BrewOfflinePartitions, which partitions.
func unexpectedNote(ctx context.Context, adm *kadm.Client, alert string, at time.Duration) string {
	note := fmt.Sprintf("%s fired %ss after the fault", alert, secs(at))
	if alert == "BrewOfflinePartitions" {
		note += ": " + offlineNow(ctx, adm)
	}
	return note
}

// ControllerView is what one node's exporter said, through Prometheus, when
// BrewOfflinePartitions fired: whether it was the active controller and how
// many partitions it counted offline.
type ControllerView struct {
	Node    string
	Active  float64 // kafka_controller_kafkacontroller_activecontrollercount
	Offline float64 // kafka_controller_kafkacontroller_offlinepartitionscount
}

// controllers reads both series of every node Prometheus scraped last. Each
// controller replays the metadata log and counts offline partitions itself,
// so a controller that is not the active one reports the same count.
func controllers(ctx context.Context, prom *Prom) ([]ControllerView, error) {
	byNode := map[string]*ControllerView{}
	for _, q := range []string{"kafka_controller_kafkacontroller_activecontrollercount", "kafka_controller_kafkacontroller_offlinepartitionscount"} {
		ss, err := prom.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			n := s.Labels["node"]
			v, ok := byNode[n]
			if !ok {
				v = &ControllerView{Node: n}
				byNode[n] = v
			}
			if strings.HasSuffix(q, "activecontrollercount") {
				v.Active = s.Value
			} else {
				v.Offline = s.Value
			}
		}
	}
	var out []ControllerView
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		out = append(out, *byNode[n])
	}
	return out, nil
}

// controllersSeen reads the controllers' views until the active one and
// another have both been scraped with the partitions offline (a scrape
// comes every 5 s; the alert's for: is 10 s), for up to 30 s; then it
// returns the last views, whatever they show.
func controllersSeen(ctx context.Context, prom *Prom) ([]ControllerView, error) {
	var views []ControllerView
	var qerr error
	err := brewkit.WaitFor(ctx, 30*time.Second, poll, func() bool {
		views, qerr = controllers(ctx, prom)
		if qerr != nil {
			return false
		}
		active := slices.IndexFunc(views, func(v ControllerView) bool { return v.Active == 1 && v.Offline > 0 })
		other := slices.IndexFunc(views, func(v ControllerView) bool { return v.Active == 0 && v.Offline > 0 })
		return active >= 0 && other >= 0
	})
	if qerr != nil {
		return nil, qerr
	}
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	return views, nil
}
