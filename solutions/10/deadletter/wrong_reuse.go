// A plausible wrong solution of exercise 10/deadletter: it adds the headers
// to the failed record itself and sends that, so the letter goes back to
// the topic the record came from (and its original headers are replaced).
// The grader must fail it.
package deadletter

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/retry"
)

func DeadLetter(dlt string, r *kgo.Record, err error, attempts int, first time.Time) *kgo.Record {
	r.Headers = []kgo.RecordHeader{
		{Key: retry.HeaderError, Value: []byte(err.Error())},
		{Key: retry.HeaderKind, Value: []byte("retriable")},
		{Key: retry.HeaderAttempts, Value: []byte(strconv.Itoa(attempts))},
		{Key: retry.HeaderTopic, Value: []byte(r.Topic)},
		{Key: retry.HeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		{Key: retry.HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		{Key: retry.HeaderFirstFailure, Value: []byte(first.Format(time.RFC3339))},
	}
	return r
}
