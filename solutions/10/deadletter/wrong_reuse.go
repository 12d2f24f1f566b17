// A plausible wrong solution of exercise 10/deadletter: it adds the headers
// to the failed record itself and sends that, so the letter goes back to
// the topic the record came from (and its original headers are replaced).
// The grader must fail it.
package deadletter

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
)

func DeadLetter(dlt string, r *kgo.Record, err error, attempts int, first time.Time) *kgo.Record {
	r.Headers = []kgo.RecordHeader{
		{Key: retrytopics.HeaderError, Value: []byte(err.Error())},
		{Key: retrytopics.HeaderKind, Value: []byte("retriable")},
		{Key: retrytopics.HeaderAttempts, Value: []byte(strconv.Itoa(attempts))},
		{Key: retrytopics.HeaderTopic, Value: []byte(r.Topic)},
		{Key: retrytopics.HeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		{Key: retrytopics.HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		{Key: retrytopics.HeaderFirstFailure, Value: []byte(first.Format(time.RFC3339))},
	}
	return r
}
