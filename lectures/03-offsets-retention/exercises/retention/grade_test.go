package retention

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	keepAtLeast = 10 * time.Second
	goneWithin  = 30 * time.Second
	writeFor    = 38 * time.Second
	probeFor    = 40 * time.Second
	rate        = 20 // clicks a second

	hint = "retention deletes whole closed segments, once a segment's newest record is older than retention.ms, at the next retention check; " +
		"a segment still being written never expires, and how long one stays open is a topic config too (lecture 03: retention by segments)"
	tooSoonHint = "retention.ms is the least age a record reaches before retention may delete it: keep it at or above what must be kept (lecture 03: retention by segments)"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), probeFor+writeFor+20*time.Second)
	defer cancel()
	adm := env.Admin(t)
	retentionRuns(ctx, t, env)

	configs := Configs()
	kv := map[string]*string{}
	shown := []string{"no configs"}
	if len(configs) > 0 {
		shown = nil
	}
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		v := configs[k]
		kv[k] = &v
		shown = append(shown, k+"="+v)
	}
	topic := fmt.Sprintf("brew.test.ex-clickstream-%d", rand.IntN(1e6))
	_, err := adm.CreateTopic(ctx, 1, 3, kv, topic)
	if err != nil {
		grade.Fail(t, "the configs are topic configs, set at creation (retention.ms, segment.ms, ...)", "creating a topic with configs [%s]: %v", strings.Join(shown, " "), err)
	}
	t.Cleanup(func() { adm.DeleteTopic(context.Background(), topic) }) //nolint:errcheck // best effort
	if err := brewkit.WaitTopics(ctx, adm, topic); err != nil {
		t.Fatal(err)
	}
	t.Logf("topic %s with configs [%s]", topic, strings.Join(shown, " "))

	prod := env.Client(t, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var mu sync.Mutex
	written := map[int64]time.Time{} // offset -> when the click was written (its timestamp)
	var produceErr error
	value := make([]byte, 512)
	start := time.Now()
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	look := time.NewTicker(250 * time.Millisecond)
	defer look.Stop()
	var logStart int64
	for time.Since(start) < writeFor {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-tick.C:
			crand.Read(value) //nolint:errcheck // crypto/rand.Read does not fail
			at := time.Now()
			prod.Produce(ctx, &kgo.Record{Value: slices.Clone(value), Timestamp: at}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					produceErr = err
					return
				}
				written[r.Offset] = at
			})
		case <-look.C:
			mu.Lock()
			perr := produceErr
			mu.Unlock()
			if perr != nil {
				grade.Fail(t, "the clicks are ordinary keyless records of 512 bytes", "writing clicks to a topic with configs [%s]: %v", strings.Join(shown, " "), perr)
			}
			asked := time.Now()
			starts, err := adm.ListStartOffsets(ctx, topic)
			if err == nil {
				err = starts.Error()
			}
			if err != nil {
				continue // asked again in 250 ms
			}
			answered := time.Now()
			o, _ := starts.Lookup(topic, 0)
			if o.Offset > logStart {
				t.Logf("%5.1fs  log start %d -> %d", answered.Sub(start).Seconds(), logStart, o.Offset)
				logStart = o.Offset
			}
			mu.Lock()
			youngestGone, gone := written[logStart-1]
			oldestLeft, left := written[logStart]
			mu.Unlock()
			if gone && answered.Sub(youngestGone) < keepAtLeast {
				grade.Fail(t, tooSoonHint, "at %.1fs the log start offset passed the click at offset %d, written only %.1fs earlier (kept at least %s) [%s]",
					answered.Sub(start).Seconds(), logStart-1, answered.Sub(youngestGone).Seconds(), keepAtLeast, strings.Join(shown, " "))
			}
			if left && asked.Sub(oldestLeft) > goneWithin {
				grade.Fail(t, hint, "at %.1fs the click at offset %d, written %.1fs earlier, was still readable (log start %d; no click may be readable %s after it was written) [%s]",
					asked.Sub(start).Seconds(), logStart, asked.Sub(oldestLeft).Seconds(), logStart, goneWithin, strings.Join(shown, " "))
			}
		}
	}
}

// retentionRuns waits until every broker runs its retention checks: a
// broker makes its first one log.initial.task.delay.ms (30 s) after it
// starts, so on a node another test has just restarted nothing would be
// deleted in time, whatever the configs. A probe topic with a partition led
// by each broker and a 1 s retention gets one record per partition; once
// every log start has moved past it, the grading can begin.
func retentionRuns(ctx context.Context, t *testing.T, env *brewtest.Env) {
	t.Helper()
	adm := env.Admin(t)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := int32(len(md.Brokers))
	name, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.test.ex-retention-probe-", Partitions: n, Configs: map[string]string{"retention.ms": "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer drop(ctx) //nolint:errcheck // best effort
	cl := env.Client(t, kgo.DefaultProduceTopic(name), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("probe")}).FirstErr(); err != nil {
			t.Fatalf("writing to the probe topic %s: %v", name, err)
		}
	}
	start := time.Now()
	brewtest.Eventually(t, probeFor, "every broker deletes an expired record (a node restarted moments ago checks retention 30 s after it started)", func() (bool, string) {
		starts, err := adm.ListStartOffsets(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		var waiting []int32
		starts.Each(func(o kadm.ListedOffset) {
			if o.Err != nil || o.Offset < 1 {
				waiting = append(waiting, o.Partition)
			}
		})
		return len(waiting) == 0 && len(starts[name]) == int(n), fmt.Sprintf("partitions %v of %s not yet", waiting, name)
	})
	t.Logf("every broker checks retention (%.1fs)", time.Since(start).Seconds())
}
