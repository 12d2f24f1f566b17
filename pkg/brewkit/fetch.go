package brewkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// unknownTopicGrace is how long a partition may be unknown to the broker a
// consumer fetches from before that counts as an error: right after a topic
// is created, brokers learn of it a moment apart; a deleted topic stays unknown.
const unknownTopicGrace = 5 * time.Second

// FetchCheck finds, in a consumer's fetches, the error its program must
// report rather than wait on: any error Kafka will not retry (authorization,
// authentication, a corrupt record), and a topic that stays unknown longer
// than unknownTopicGrace. A cancelled poll and a closed client are not errors,
// nor are errors kgo retries by itself (a leader moving, a broker connection
// dying under a group session that kgo then rejoins). A topic deleted under
// the reader shows only when its client was built with
// kgo.KeepRetryableFetchErrors (kgo then also returns the fetch errors it
// retries by itself, an unknown topic among them), as every course reader's
// is. The zero value is ready to use; one FetchCheck follows one consumer.
type FetchCheck struct {
	unknownSince map[string]time.Time
	seen         map[string]bool // topics a fetch answered without an error
}

// Err returns the first error of fs to report, naming topic and partition.
func (c *FetchCheck) Err(fs kgo.Fetches) error {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err == nil {
			delete(c.unknownSince, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
			if c.seen == nil {
				c.seen = map[string]bool{}
			}
			c.seen[p.Topic] = true
		}
	})
	for _, fe := range fs.Errors() {
		err := fe.Err
		var dataLoss *kgo.ErrDataLoss
		var groupErr *kgo.ErrGroupSession
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed):
			continue
		case errors.As(err, &dataLoss):
			continue // kgo resets and goes on; the programs count what is lost themselves
		case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
			key := fmt.Sprintf("%s/%d", fe.Topic, fe.Partition)
			if c.unknownSince == nil {
				c.unknownSince = map[string]time.Time{}
			}
			first, ok := c.unknownSince[key]
			if !ok {
				c.unknownSince[key] = time.Now()
				continue
			}
			if time.Since(first) < unknownTopicGrace {
				continue
			}
			if !c.seen[fe.Topic] {
				return fmt.Errorf("reading %s: %w (for %s): the topic does not exist; create it first (the lecture's make target, or kafka-topics.sh --create --topic %s)", fe.Topic, err, unknownTopicGrace, fe.Topic)
			}
			return fmt.Errorf("reading %s: %w (for %s, after it was read: was the topic deleted?)", fe.Topic, err, unknownTopicGrace)
		case errors.As(err, &groupErr) && !groupFatal(groupErr.Err):
			// kgo tells through a fetch error that joining the group
			// failed (a dead connection, a coordinator moving), and
			// keeps rejoining by itself.
			continue
		case kerr.IsRetriable(err), kgo.IsRetryableBrokerErr(err):
			continue
		}
		return fmt.Errorf("reading %s partition %d: %w", fe.Topic, fe.Partition, err)
	}
	return nil
}

// groupFatal: a group session error that rejoining does not cure.
func groupFatal(err error) bool {
	for _, fatal := range []error{
		kerr.GroupAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.SaslAuthenticationFailed,
		kerr.InvalidGroupID, kerr.FencedInstanceID, kerr.InconsistentGroupProtocol, kerr.UnsupportedAssignor,
		kerr.GroupMaxSizeReached, kerr.UnsupportedVersion,
	} {
		if errors.Is(err, fatal) {
			return true
		}
	}
	return false
}

// Poll is cl.PollRecords(ctx, max) (max 0: all that is buffered) followed by
// Err, bounded by the brokers' answers: when a node that leads a partition
// cl reads has answered none of cl's fetches for cfg.Bound while its
// requests time out (a fetch, or the first request on a new connection for
// one, as a paused or stuck broker's do), Poll returns the records it has
// and an error naming the node, instead of waiting for records that will not
// come. cl must come from NewClient or ClientOpts, which watch its requests.
func (c *FetchCheck) Poll(ctx context.Context, cl *kgo.Client, max int) (kgo.Fetches, error) {
	w := watchOf(cl)
	if w == nil {
		fs := cl.PollRecords(ctx, max)
		return fs, c.Err(fs)
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := w.onStuck(func(node int32, err error) {
		go func() { // not under kgo's hook: leads asks the client
			if leads(cl, node) {
				cancel(err)
			}
		}()
	})
	defer stop()
	fs := cl.PollRecords(pctx, max)
	if ctx.Err() == nil && pctx.Err() != nil {
		return fs, context.Cause(pctx)
	}
	return fs, c.Err(fs)
}

// leads reports whether node leads a partition of a topic cl consumes, as
// far as cl knows (a topic it knows nothing of yet counts).
func leads(cl *kgo.Client, node int32) bool {
	topics := cl.GetConsumeTopics()
	if len(topics) == 0 {
		return true // a share group's or assigned partitions: cannot tell
	}
	for _, t := range topics {
		for p := int32(0); ; p++ {
			leader, _, err := cl.PartitionLeader(t, p)
			if leader == node || (p == 0 && leader < 0 && err == nil) {
				return true
			}
			if leader < 0 {
				break
			}
		}
	}
	return false
}

// fetchWatch is the hook NewClient and ClientOpts give every client: it
// notes since when each node has answered no fetch while requests to it
// timed out, and tells its listeners once that lasts bound (at that moment,
// and at each timeout after). A fetch that times out counts, and so do a new
// connection's first request (ApiVersions) and a dial: a consumer's fetches
// to a paused node may never leave the client. Other requests do not: they
// may wait on other nodes (a commit on the followers of the group's offsets
// partition). Only a fetch answered clears a node: one that answers
// heartbeats, metadata or writes but leaves fetches waiting is stuck all the
// same.
type fetchWatch struct {
	bound time.Duration

	mu        sync.Mutex
	since     map[int32]unanswered // the nodes whose requests time out
	listeners map[int]func(node int32, err error)
	next      int
}

// unanswered is a node's first request unanswered since its last answered
// fetch: when it was sent, to whom.
type unanswered struct {
	at   time.Time
	meta kgo.BrokerMetadata
}

func newFetchWatch(bound time.Duration) *fetchWatch {
	return &fetchWatch{bound: bound, since: map[int32]unanswered{}, listeners: map[int]func(int32, error){}}
}

// OnBrokerRead implements kgo.HookBrokerRead: a read that timed out is a
// request the node left unanswered.
func (w *fetchWatch) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, readWait, timeToRead time.Duration, err error) {
	switch key {
	case int16(kmsg.Fetch), int16(kmsg.ShareFetch):
		w.note(meta, time.Now().Add(-readWait-timeToRead), err == nil, err)
	case int16(kmsg.ApiVersions): // a new connection's first request
		w.note(meta, time.Now().Add(-readWait-timeToRead), false, err)
	}
	// Other requests may wait on other nodes: a group's commit on the
	// followers of its offsets partition, a write on the ISR.
}

// OnBrokerConnect implements kgo.HookBrokerConnect: a paused node's kernel
// accepts connections only until its listen backlog is full; a dial that
// then times out is unanswered too.
func (w *fetchWatch) OnBrokerConnect(meta kgo.BrokerMetadata, dialed time.Duration, _ net.Conn, err error) {
	w.note(meta, time.Now().Add(-dialed), false, err)
}

// note notes that node meta answered a fetch, or left a request sent (or a
// dial begun) at asked unanswered (err a timeout).
func (w *fetchWatch) note(meta kgo.BrokerMetadata, asked time.Time, answered bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if answered {
		delete(w.since, meta.NodeID)
		return
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() { // a read's deadline, or a dial's
		return // answered, or a connection that died or was refused: kgo dials again, and the next answer tells
	}
	first, ok := w.since[meta.NodeID]
	if !ok {
		first = unanswered{asked, meta}
		w.since[meta.NodeID] = first
		time.AfterFunc(time.Until(asked.Add(w.bound)), func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.since[meta.NodeID] == first { // no fetch answered since
				w.tellLocked(first, w.listeners)
			}
		})
	}
	w.tellLocked(first, w.listeners)
}

// tellLocked tells listeners that node u.meta is stuck, if it has been
// since u.at for bound.
func (w *fetchWatch) tellLocked(u unanswered, listeners map[int]func(int32, error)) {
	if time.Since(u.at) < w.bound {
		return
	}
	err := fmt.Errorf("node %d (%s:%d) has answered no fetch or other request for %s (%s): is it paused or overloaded? `make status` shows the nodes",
		u.meta.NodeID, u.meta.Host, u.meta.Port, time.Since(u.at).Round(100*time.Millisecond), EnvTimeout+"="+w.bound.String())
	for _, l := range listeners {
		l(u.meta.NodeID, err)
	}
}

// onStuck calls fn with each node found stuck until the returned stop.
func (w *fetchWatch) onStuck(fn func(node int32, err error)) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.next
	w.next++
	w.listeners[id] = fn
	for _, u := range w.since { // stuck already, between two polls
		w.tellLocked(u, map[int]func(int32, error){id: fn})
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.listeners, id)
	}
}

// watchOf finds the fetchWatch among cl's hooks.
func watchOf(cl *kgo.Client) *fetchWatch {
	hooks, _ := cl.OptValue(kgo.WithHooks).([]kgo.Hook)
	for _, h := range hooks {
		if w, ok := h.(*fetchWatch); ok {
			return w
		}
	}
	return nil
}
