// Package replay is exercise 03/replay: rewind a group to a point in time.
//
// Graded on: any stand.
//
// Brew's analytics found a bug in the revenue report and must recompute it
// from 9:00 this morning: its group brew.analytics has read the orders
// topic to the end, and must read again from the first order placed at or
// after 9:00, on every partition. Write ReplayFrom: commit for group, on
// every partition of topic, the offset of the first record whose timestamp
// is at or after at; a partition with no record that new gets its end
// offset (nothing to re-read there). The group has no active members. The
// topic holds hours of orders, so do not read them to find the place: the
// grader counts the records fetched through the client it gives you, and
// finding an offset for a time needs none. It writes orders with known
// timestamps to three partitions, calls ReplayFrom and compares the offsets
// the group has committed with the ones the orders' timestamps call for.
package replay

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ReplayFrom moves group's committed offsets on every partition of topic to
// the first record at or after at (the end offset where none is that new).
func ReplayFrom(ctx context.Context, cl *kgo.Client, group, topic string, at time.Time) error {
	// TODO: find each partition's first offset at or after at, and commit it for the group.
	return nil
}
