// Package failures triggers, for real, the errors a producer meets, and
// classifies each the way franz-go reports it: the error, whether the client
// retried it by itself, and what the program should do. It ends with a record
// that carries headers, written and read back.
package failures

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

// Case is one error, triggered.
type Case struct {
	Name      string `json:"name"`
	Trigger   string `json:"trigger"`
	Err       string `json:"error"`     // the error's name: a Kafka code, or franz-go's own
	Message   string `json:"message"`   // the full error
	Retriable bool   `json:"retriable"` // franz-go retried it by itself before giving up
	Do        string `json:"what_to_do"`
}

// Result is every case and the record with headers.
type Result struct {
	Cases   []Case            `json:"cases"`
	Headers map[string]string `json:"headers_read_back"`
}

// Run triggers each case on the cluster behind cfg; the paused leader and the
// stopped node go through nodes and are resumed and started again.
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Result, error) {
	var res Result
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	for _, c := range []func(context.Context, brewkit.Config, *kadm.Client, brewkit.NodeControl) (Case, error){
		notEnoughReplicas, tooLarge, unknownTopic, deliveryTimeout,
	} {
		cs, err := c(ctx, cfg, adm, nodes)
		if err != nil {
			return res, err
		}
		say(fmt.Sprintf("%s: %s", cs.Name, cs.Message))
		res.Cases = append(res.Cases, cs)
	}
	res.Headers, err = headers(ctx, cfg, adm)
	return res, err
}

// classify names err and says whether franz-go retried it: a Kafka error by
// its code, franz-go's record time-out by name.
func classify(c Case, err error) Case {
	c.Message = err.Error()
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		c.Err, c.Retriable = ke.Message, ke.Retriable
	case errors.Is(err, kgo.ErrRecordTimeout):
		c.Err, c.Retriable = "kgo.ErrRecordTimeout", false
	default:
		c.Err = "other"
	}
	return c
}

func produce(ctx context.Context, cfg brewkit.Config, r *kgo.Record, opts ...kgo.Opt) error {
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, r).FirstErr()
}

var errNoError = errors.New("the write succeeded: the case did not trigger")

func notEnoughReplicas(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, nodes brewkit.NodeControl) (Case, error) {
	c := Case{Name: "not enough replicas", Trigger: "min.insync.replicas=3, one replica's node stopped",
		Do: "wait and alert: the ISR refills when the node returns; never lower acks to get through"}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.errors.", Partitions: 1, Configs: map[string]string{"min.insync.replicas": "3"}})
	if err != nil {
		return c, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	_, followers, err := lab.Replicas(ctx, adm, topic, 0)
	if err != nil {
		return c, err
	}
	stop := int(followers[0])
	if followers[0] == brewkit.SimulatedController {
		stop = int(followers[1]) // the simulation cannot stop its controller; real Kafka does not mind
	}
	if err := nodes.StopNode(ctx, stop, false); err != nil {
		return c, err
	}
	defer nodes.StartNode(context.WithoutCancel(ctx), stop) //nolint:errcheck // a failed start shows in make status
	err = brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
		isr, err := lab.ISR(ctx, adm, topic, 0)
		return err == nil && len(isr) == 2
	})
	if err != nil {
		return c, fmt.Errorf("the ISR of %s did not shrink: %w", topic, err)
	}
	err = produce(ctx, cfg, &kgo.Record{Topic: topic, Value: []byte("order")},
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(3))
	if err == nil {
		return c, errNoError
	}
	return classify(c, err), nil
}

func tooLarge(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, _ brewkit.NodeControl) (Case, error) {
	c := Case{Name: "record too large", Trigger: "2 KiB of random bytes, max.message.bytes=1024",
		Do: "do not retry: split the record, or store the payload elsewhere and send its address"}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.errors.", Partitions: 1, Configs: map[string]string{"max.message.bytes": "1024"}})
	if err != nil {
		return c, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	value := make([]byte, 2048)
	crand.Read(value) //nolint:errcheck // crypto/rand.Read does not fail
	if err := produce(ctx, cfg, &kgo.Record{Topic: topic, Value: value}); err != nil {
		return classify(c, err), nil
	}
	return c, errNoError
}

func unknownTopic(ctx context.Context, cfg brewkit.Config, _ *kadm.Client, _ brewkit.NodeControl) (Case, error) {
	c := Case{Name: "unknown topic", Trigger: "brew.no-such-topic, auto.create.topics.enable=false",
		Do: "create the topic first (a deploy step), and check the name"}
	err := produce(ctx, cfg, &kgo.Record{Topic: "brew.no-such-topic", Value: []byte("order")}, kgo.UnknownTopicRetries(2))
	if err == nil {
		return c, errNoError
	}
	return classify(c, err), nil
}

func deliveryTimeout(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, nodes brewkit.NodeControl) (Case, error) {
	c := Case{Name: "delivery timeout", Trigger: "the partition's leader paused, delivery timeout 3s",
		Do: "the write may or may not have landed: read back or rely on idempotence before writing again"}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.errors.", Partitions: 1})
	if err != nil {
		return c, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	leader, _, err := lab.Replicas(ctx, adm, topic, 0)
	if err != nil {
		return c, err
	}
	// A first write with the default timeouts waits until the new topic takes
	// writes (a node that has just come back may lead it and still be catching
	// up); only then does the 3 s client start.
	if err := produce(ctx, cfg, &kgo.Record{Topic: topic, Value: []byte("warm-up")}); err != nil {
		return c, fmt.Errorf("writing to %s: %w", topic, err)
	}
	cl, err := brewkit.NewClient(cfg, kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(3*time.Second),
		kgo.ProduceRequestTimeout(time.Second), kgo.RequestTimeoutOverhead(time.Second))
	if err != nil {
		return c, err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return c, fmt.Errorf("writing to %s: %w", topic, err)
	}
	if err := nodes.PauseNode(ctx, int(leader)); err != nil {
		return c, err
	}
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("order")}).FirstErr()
	if rerr := nodes.ResumeNode(context.WithoutCancel(ctx), int(leader)); rerr != nil {
		return c, rerr
	}
	if err == nil {
		return c, errNoError
	}
	return classify(c, err), nil
}

// The headers an order carries: who traced it, what it is, which schema.
var orderHeaders = []kgo.RecordHeader{
	{Key: "trace-id", Value: []byte("4bf92f3577b34da6a3ce929d0e0e4736")},
	{Key: "event-type", Value: []byte(brewkit.OrderPlaced)},
	{Key: "schema-version", Value: []byte(fmt.Sprint(brewkit.EventVersion))},
}

func headers(ctx context.Context, cfg brewkit.Config, adm *kadm.Client) (map[string]string, error) {
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.errors.", Partitions: 1})
	if err != nil {
		return nil, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	if err := produce(ctx, cfg, &kgo.Record{Topic: topic, Key: []byte("ord-0000001"), Value: []byte("{}"), Headers: orderHeaders}); err != nil {
		return nil, fmt.Errorf("writing to %s: %w", topic, err)
	}
	recs, err := lab.ReadAll(ctx, cfg, adm, topic)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, h := range recs[0].Headers {
		out[h.Key] = string(h.Value)
	}
	return out, nil
}

// Print writes the cases as a table and the headers read back.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "CASE", "ERROR", "RETRIED BY KGO", "WHAT TO DO")
	for _, c := range r.Cases {
		t.Row(c.Name, c.Err, yesNo(c.Retriable), c.Do)
	}
	t.Flush()
	fmt.Fprintln(w, "\nheaders read back from an order:")
	for _, h := range orderHeaders {
		fmt.Fprintf(w, "  %-15s %s\n", h.Key, r.Headers[h.Key])
	}
}

func yesNo(b bool) string {
	if b {
		return "yes, then gave up"
	}
	return "no"
}
