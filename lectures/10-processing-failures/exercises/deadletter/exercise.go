// Package deadletter is exercise 10/deadletter: write a dead letter that tells on-call everything about the failure.
//
// Graded on: any stand.
//
// A record courier-service gives up on goes to brew.courier.dlt, and weeks
// later someone must find out why it failed and replay it. Write DeadLetter:
// from the record that failed, the error, how many times it was tried and
// when it first failed, build the record to write to the dead-letter topic.
// It must keep the order's key, value and headers, and add the lecture's
// headers (retry.HeaderError, HeaderKind: "poison" for a record that never
// decodes, else "retriable", HeaderAttempts, HeaderTopic, HeaderPartition,
// HeaderOffset, HeaderFirstFailure in RFC 3339 UTC with milliseconds). The
// grader reads real orders from a topic, writes your letters to a real
// dead-letter topic, reads them back and checks each against its original.
package deadletter

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DeadLetter returns the record to write to the dead-letter topic dlt for
// r, which failed with err after attempts tries, the first at first.
func DeadLetter(dlt string, r *kgo.Record, err error, attempts int, first time.Time) *kgo.Record {
	// TODO: the letter: where it goes, what it carries, and why.
	return &kgo.Record{Topic: dlt}
}
