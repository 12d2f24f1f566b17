// The reference solution of exercise 10/deadletter.
package deadletter

import (
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
)

// DeadLetter copies r's key, value and headers into a record for dlt, with
// the headers that say why, how often, since when, and where it came from.
func DeadLetter(dlt string, r *kgo.Record, err error, attempts int, first time.Time) *kgo.Record {
	kind := "retriable"
	var poison *courier.PoisonError
	if errors.As(err, &poison) {
		kind = "poison"
	}
	headers := append([]kgo.RecordHeader(nil), r.Headers...)
	add := func(k, v string) { headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	add(retrytopics.HeaderError, err.Error())
	add(retrytopics.HeaderKind, kind)
	add(retrytopics.HeaderAttempts, strconv.Itoa(attempts))
	add(retrytopics.HeaderTopic, r.Topic)
	add(retrytopics.HeaderPartition, strconv.Itoa(int(r.Partition)))
	add(retrytopics.HeaderOffset, strconv.FormatInt(r.Offset, 10))
	add(retrytopics.HeaderFirstFailure, first.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	return &kgo.Record{Topic: dlt, Key: r.Key, Value: r.Value, Headers: headers}
}
