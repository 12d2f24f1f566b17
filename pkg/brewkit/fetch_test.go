package brewkit_test

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func fetchErr(topic string, err error) kgo.Fetches {
	return kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: topic, Partitions: []kgo.FetchPartition{{Partition: 0, Err: err}}}}}}
}

// What kgo retries by itself is not reported; what it cannot is, at once.
func TestFetchCheckReportsOnlyWhatKgoCannotRetry(t *testing.T) {
	var c brewkit.FetchCheck
	require.NoError(t, c.Err(fetchErr("t", kerr.NotLeaderForPartition)))
	require.NoError(t, c.Err(fetchErr("", &kgo.ErrGroupSession{Err: io.EOF})), "a dead connection under the group session: kgo rejoins")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	require.NoError(t, c.Err(fetchErr("", &kgo.ErrGroupSession{Err: refused})), "the coordinator's node is down: kgo finds the next")
	err := c.Err(fetchErr("", &kgo.ErrGroupSession{Err: kerr.GroupAuthorizationFailed}))
	require.ErrorIs(t, err, kerr.GroupAuthorizationFailed)
	err = c.Err(fetchErr("t", kerr.TopicAuthorizationFailed))
	require.True(t, errors.Is(err, kerr.TopicAuthorizationFailed), "%v", err)
}

// A topic unknown for longer than UnknownTopicGrace is reported: as one that
// does not exist when the reader never read it, as one perhaps deleted when
// it did (virtual time: the grace passes at once).
func TestFetchCheckTellsMissingFromDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c brewkit.FetchCheck
		require.NoError(t, c.Err(fetchErr("never", kerr.UnknownTopicOrPartition)), "within the grace: brokers learn of a new topic a moment apart")
		time.Sleep(brewkit.UnknownTopicGrace)
		err := c.Err(fetchErr("never", kerr.UnknownTopicOrPartition))
		require.ErrorIs(t, err, kerr.UnknownTopicOrPartition)
		require.ErrorContains(t, err, "the topic does not exist; create it first")

		require.NoError(t, c.Err(fetchErr("gone", nil)), "read once")
		require.NoError(t, c.Err(fetchErr("gone", kerr.UnknownTopicOrPartition)))
		time.Sleep(brewkit.UnknownTopicGrace)
		err = c.Err(fetchErr("gone", kerr.UnknownTopicOrPartition))
		require.ErrorIs(t, err, kerr.UnknownTopicOrPartition)
		require.ErrorContains(t, err, "was the topic deleted?")
	})
}
