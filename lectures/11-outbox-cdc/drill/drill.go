// Package drill is what lecture 11's crash drills share: a child process
// (this program re-run with a subcommand) that may be killed with SIGKILL,
// seeded kill points, the event id a record carries, and reading back what
// a run wrote to its topic.
package drill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Child runs command with args as a child process against cfg's cluster
// and waits for it. It reports whether the child was killed with SIGKILL
// (kill -9: what the drills do to it); any other failure is an error with
// the child's last line on stderr.
func Child(ctx context.Context, cfg brewkit.Config, command []string, args ...string) (killed bool, err error) {
	killed, _, err = ChildOutput(ctx, cfg, command, args...)
	return killed, err
}

// ChildOutput is Child, returning what the child wrote to stdout too.
func ChildOutput(ctx context.Context, cfg brewkit.Config, command []string, args ...string) (killed bool, stdout []byte, err error) {
	cmd := brewkit.Command(ctx, cfg, command, args...)
	var stderr, out bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &out
	err = cmd.Run()
	stdout = out.Bytes()
	if ctx.Err() != nil {
		return false, stdout, ctx.Err()
	}
	if err == nil {
		return false, stdout, nil
	}
	if brewkit.Crashed(err) {
		return true, stdout, nil
	}
	msg := strings.TrimSpace(stderr.String())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg == "" {
		msg = err.Error()
	}
	return false, stdout, errors.New(msg)
}

// Self is this program run with subcommand: the child the drills kill. Not
// `go run`: a SIGKILL would hit the program go run started, and go run
// would report an ordinary failure.
func Self(subcommand string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{self, subcommand}, nil
}

// Points returns n distinct numbers of [lo, hi), sorted, drawn from seed.
func Points(seed uint64, n, lo, hi int) []int {
	rng := rand.New(rand.NewPCG(seed, 0x11))
	if n > hi-lo {
		n = hi - lo
	}
	picked := map[int]bool{}
	for len(picked) < n {
		picked[lo+rng.IntN(hi-lo)] = true
	}
	out := make([]int, 0, n)
	for p := range picked {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Order is order n of a run, the same for every seed and n.
func Order(seed uint64, run string, n int) brewkit.Event {
	ev := brewkit.NewOrder(rand.New(rand.NewPCG(seed, uint64(n))), int64(n), time.Now())
	ev.Seq, ev.Run = int64(n), run
	return ev
}

// HeaderEventID is the record header with the event's id (the outbox row's):
// what the kitchen's inbox remembers.
const HeaderEventID = "event-id"

// EventID is r's event id, "" when it has none.
func EventID(r *kgo.Record) string {
	for _, h := range r.Headers {
		if h.Key == HeaderEventID {
			return string(h.Value)
		}
	}
	return ""
}

// Start is where a run begins in topic: its end offsets now.
func Start(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	from := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { from[o.Partition] = o.Offset })
	return from, nil
}

// Read reads topic from from to its end and returns the events whose Run
// starts with run, with each record.
func Read(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string, from map[int32]int64, run string) ([]Got, error) {
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	var got []Got
	var bad error
	err = brewkit.ReadTo(ctx, cfg, topic, from, ends, 30*time.Second, func(r *kgo.Record) {
		ev, err := brewkit.DecodeEvent(r)
		if err != nil {
			bad = err
			return
		}
		if strings.HasPrefix(ev.Run, run) {
			got = append(got, Got{Event: ev, ID: EventID(r), Partition: r.Partition, Offset: r.Offset})
		}
	})
	if err == nil {
		err = bad
	}
	return got, err
}

// Got is an event read back.
type Got struct {
	brewkit.Event
	ID        string // its event id header
	Partition int32
	Offset    int64
}

// Count is how many times each order id occurs in events.
func Count(events []Got) map[string]int {
	n := map[string]int{}
	for _, e := range events {
		n[e.OrderID]++
	}
	return n
}

// Spec names a kill point on a command line: "stage@n".
func Spec(stage string, n int) string { return fmt.Sprintf("%s@%d", stage, n) }
