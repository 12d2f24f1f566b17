package resume

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	lostHint = "commit what was processed, not what was received: an offset committed for a record handle has not processed " +
		"(or that failed) is a record no run will read again (lecture 03: commit what you processed)"
	rereadHint = "the group's committed offset is the next record to process: commit every processed record before the run ends, " +
		"also when handle fails, and start the next run from the committed offsets (lecture 03: four numbers per partition)"
	startHint = "a group that never committed starts at the log start; the committed offsets belong to the group, so a run finds them there (lecture 03)"
	runLimit  = 20 * time.Second
	failOn    = "ord-0000037"
)

var errDown = errors.New("the report's database is down")

// report is what the grader's handle saw.
type report struct {
	processed map[string]int // successful handles per order
	attempts  int
	failNext  bool // fail on failOn once
}

func (r *report) handle(rec *kgo.Record) error {
	r.attempts++
	if r.failNext && string(rec.Key) == failOn {
		r.failNext = false
		return errDown
	}
	r.processed[string(rec.Key)]++
	return nil
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 5*runLimit)
	defer cancel()
	topic := env.FreshTopic(t, "ex-kitchen", 3)
	group := fmt.Sprintf("brew.test.ex-kitchen-report-%d", rand.IntN(1e6))
	adm := env.Admin(t)
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	prod := env.Client(t, kgo.DefaultProduceTopic(topic))
	written := 0
	write := func(n int) {
		var records []*kgo.Record
		for range n {
			written++
			records = append(records, &kgo.Record{Key: []byte(brewkit.OrderID(int64(written))), Value: []byte("{}")})
		}
		if err := prod.ProduceSync(ctx, records...).FirstErr(); err != nil {
			t.Fatalf("writing kitchen events: %v", err)
		}
	}
	rep := &report{processed: map[string]int{}}
	const waitHint = "a run reads to the end offsets it found when it started, then commits and returns; it does not wait for new records"
	run := func(what string) (err error) {
		var late bool
		bounded(t, ctx, runLimit, waitHint, what+": CatchUp", func(rctx context.Context) {
			err = CatchUp(rctx, env.Config, group, topic, rep.handle)
			late = rctx.Err() != nil && ctx.Err() == nil
		})
		if late {
			grade.Fail(t, waitHint, "%s: CatchUp did not finish within %s (it returned %v)", what, runLimit, err)
		}
		return err
	}
	// check: after a run that succeeded, every order written so far was
	// processed exactly once.
	check := func(what string) {
		var lost, twice []string
		for i := 1; i <= written; i++ {
			switch key := brewkit.OrderID(int64(i)); {
			case rep.processed[key] == 0:
				lost = append(lost, key)
			case rep.processed[key] > 1:
				twice = append(twice, fmt.Sprintf("%s x%d", key, rep.processed[key]))
			}
		}
		if len(lost) > 0 {
			grade.Fail(t, lostHint, "%s: %d of %d orders were never processed by any run: %s", what, len(lost), written, few(lost))
		}
		if len(twice) > 0 {
			grade.Fail(t, rereadHint, "%s: %d orders were processed more than once: %s", what, len(twice), few(twice))
		}
	}

	// 1. A group that never committed; handle fails on one order.
	write(60)
	rep.failNext = true
	err := run("the first run")
	if rep.attempts == 0 {
		if err != nil {
			grade.Fail(t, startHint, "the first run handed no record to handle and returned an error: %v", err)
		}
		grade.Fail(t, startHint, "the first run handed no record to handle; the topic holds %d orders and the group never committed", written)
	}
	if rep.failNext {
		grade.Fail(t, startHint, "the first run never handed %s to handle; the group never committed, so every order of the topic is due", failOn)
	}
	if !errors.Is(err, errDown) {
		grade.Fail(t, "when handle fails, stop and return its error: the caller must know the run did not finish",
			"handle failed on %s with %q, and the first run returned %v", failOn, errDown, err)
	}
	// 2. The next run: from the order that failed, to the end.
	grade.Failed(t, run("the second run"), rereadHint, "the second run, with a handle that no longer fails, returned an error")
	check("after a run that failed on " + failOn + " and the next one")
	// 3. New orders: only they are processed.
	write(30)
	grade.Failed(t, run("the third run"), rereadHint, "the third run returned an error")
	check("after 30 more orders and a third run")
	// 4. Nothing new: a run processes nothing and returns.
	before := rep.attempts
	grade.Failed(t, run("the fourth run"), rereadHint, "the fourth run, with nothing new, returned an error")
	if n := rep.attempts - before; n > 0 {
		grade.Fail(t, rereadHint, "the fourth run, with nothing written since the third, handed %d records to handle", n)
	}
}

func few(s []string) string {
	if len(s) > 5 {
		return strings.Join(slices.Clip(s[:5]), ", ") + ", ..."
	}
	return strings.Join(s, ", ")
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
