// The reference solution of exercise 06/rejoin: a static member. Its
// group.instance.id is its name; stopped, it does not leave the group, and
// back within the session timeout under the same id it takes its own place
// again, partitions and all.
package rejoin

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func Member(ctx context.Context, cfg brewkit.Config, name string, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group),
		kgo.InstanceID(name), // the same name on every start
		kgo.AutoCommitMarks(),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close() // a static member does not leave the group
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			process(r)
			cl.MarkCommitRecords(r)
		})
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.CommitMarkedOffsets(cctx)
}
