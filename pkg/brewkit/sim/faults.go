package sim

import (
	"crypto/tls"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The faults a test can inject to see how a program meets them: a request
// refused with a Kafka error (FailFetches, FailProduces), a request never
// answered (Hang), and, through Options, a cluster that wants a login
// (Login) or speaks TLS (TLS).

// Login is the SASL login every node of a cluster started with
// Options.Login requires, as a superuser.
type Login struct {
	User, Pass string
	Mechanism  string // PLAIN, SCRAM-SHA-256 (the default) or SCRAM-SHA-512
}

// Mechanism is the SASL mechanism a Login uses by default.
const Mechanism = "SCRAM-SHA-256"

func (l *Login) mechanism() string {
	if l.Mechanism == "" {
		return Mechanism
	}
	return l.Mechanism
}

// clientOpts are the options of the simulation's own clients (it asks itself
// for api versions and topic ids): the cluster's login, and TLS without
// checking the certificate, which a test makes for the run.
func (c *Cluster) clientOpts(seeds ...string) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...)}
	if l := c.opts.Login; l != nil {
		switch l.mechanism() {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: l.User, Pass: l.Pass}.AsMechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: l.User, Pass: l.Pass}.AsSha512Mechanism()))
		default:
			opts = append(opts, kgo.SASL(scram.Auth{User: l.User, Pass: l.Pass}.AsSha256Mechanism()))
		}
	}
	if c.opts.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true})) //nolint:gosec // the simulation's own certificate, made for the test
	}
	return opts
}

// FailProduces makes every produce request from now on answer each partition
// with err (a Kafka error such as kerr.TopicAuthorizationFailed), the way a
// broker answers a producer whose write permission was revoked.
func (c *Cluster) FailProduces(err *kerr.Error) {
	c.kf.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.kf.KeepControl()
		return refusal(kreq.(*kmsg.ProduceRequest), err), nil, true
	})
}

// refusal answers every partition of req with err.
func refusal(req *kmsg.ProduceRequest, err *kerr.Error) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewProduceResponseTopic()
		t.Topic, t.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition = rp.Partition
			p.ErrorCode = err.Code
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// FailFetches makes every fetch and share fetch from now on answer each
// partition with err (a Kafka error such as kerr.TopicAuthorizationFailed),
// the way a broker answers a consumer whose permission was revoked. Tests use
// it to check that programs report fetch errors instead of waiting for records.
func (c *Cluster) FailFetches(err *kerr.Error) {
	c.kf.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.kf.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition = rp.Partition
				p.ErrorCode = err.Code
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})
	c.kf.ControlKey(int16(kmsg.ShareFetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.kf.KeepControl()
		req := kreq.(*kmsg.ShareFetchRequest)
		resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = rt.TopicID
			for _, rp := range rt.Partitions {
				p := kmsg.NewShareFetchResponseTopicPartition()
				p.Partition = rp.Partition
				p.ErrorCode = err.Code
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})
}

// Hang makes every node leave requests of kind key (kmsg.Produce,
// kmsg.Fetch) unanswered from now on, while it answers every other request:
// a broker whose request handlers are stuck, which the controller does not
// fence, so that leadership never moves away from it. The requests wait
// until the cluster closes.
func (c *Cluster) Hang(key kmsg.Key) {
	c.kf.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.kf.KeepControl()
		c.kf.SleepControl(func() { <-c.closed })
		return nil, nil, false
	})
}
