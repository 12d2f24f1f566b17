package brewkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DialTimeout bounds how long a program waits for a cluster that does not answer.
const DialTimeout = 10 * time.Second

// NewClient builds a kgo client for cfg with ClientOpts.
func NewClient(cfg Config, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(ClientOpts(cfg, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", cfg.Bootstrap(), err)
	}
	return cl, nil
}

// ClientOpts are the options of a client for cfg with the course defaults (a
// client id, short dial timeout, fresh metadata so demos see leaders move
// quickly, and cfg.Bound on every wait for a broker), then opts: for
// constructors other than NewClient, such as kgo.NewGroupTransactSession.
//
// A broker that never answers must not hold a program for ever: a request
// gets a third of the bound before its connection is dropped and it is sent
// again, until the bound (kgo's RetryTimeout, for every kind), and a record not acknowledged within the bound fails with
// kgo.ErrRecordTimeout, even one in flight (AllowIdempotentProduceCancellation:
// the programs report such a record and stop; they never send it again, so no
// duplicate can follow). kgo refuses that beside a transactional id, so
// transactional clients take theirs from TransactionalID and bound their
// waits themselves. kgo counts the delivery timeout from a record's
// Timestamp: a record stamped long ago needs kgo.RecordDeliveryTimeout(0).
func ClientOpts(cfg Config, opts ...kgo.Opt) []kgo.Opt {
	perRequest := min(10*time.Second, cfg.Bound()/3)
	all := append(cfg.Opts(),
		kgo.ClientID("brew-course"),
		kgo.DialTimeout(3*time.Second),
		kgo.MetadataMinAge(250*time.Millisecond),
		kgo.RequestTimeoutOverhead(perRequest),
		kgo.RetryTimeout(cfg.Bound()), // a request sent again and again gives up
		kgo.ProduceRequestTimeout(perRequest),
		kgo.RecordDeliveryTimeout(cfg.Bound()),
		kgo.WithHooks(newFetchWatch(cfg.Bound())), // FetchCheck.Poll's bound
	)
	if os.Getenv("BREW_KGO_DEBUG") == "1" { // what the client does, on stderr
		all = append(all, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	if wait := cfg.Bound() / 3; wait < 5*time.Second {
		// A fetch waits this long for records (kgo's default 5 s, or
		// 500 ms in a share group): under a short bound a node that
		// leaves fetches unanswered shows within it.
		all = append(all, kgo.FetchMaxWait(wait))
	}
	if !slices.ContainsFunc(opts, isTransactional) {
		all = append(all, kgo.AllowIdempotentProduceCancellation())
	}
	return append(all, opts...)
}

// TransactionalID is kgo.TransactionalID for a client built by NewClient or
// ClientOpts, which then leave out what kgo refuses beside it.
func TransactionalID(id string) kgo.Opt { return transactional{kgo.TransactionalID(id)} }

type transactional struct{ kgo.Opt }

func isTransactional(o kgo.Opt) bool { _, ok := o.(transactional); return ok }

// Connect builds a client with NewClient and checks that the cluster answers
// within DialTimeout. Its error is one line a person can act on.
func Connect(ctx context.Context, cfg Config, opts ...kgo.Opt) (*kgo.Client, *kadm.Client, error) {
	cl, err := NewClient(cfg, opts...)
	if err != nil {
		return nil, nil, err
	}
	if err := Ping(ctx, cfg, cl); err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, kadm.NewClient(cl), nil
}

// unreachableError says that no broker of the cluster answered.
type unreachableError struct {
	Bootstrap string
	Err       error
}

func (e *unreachableError) Error() string {
	if dns := (*net.DNSError)(nil); errors.As(e.Err, &dns) {
		return fmt.Sprintf("no Kafka answers at %s: host %s does not resolve (%v): check %s",
			e.Bootstrap, dns.Name, dns.Err, EnvBootstrap)
	}
	return fmt.Sprintf("no Kafka answers at %s (%v): start a stand with `make up` in the repository root, or point %s at a cluster",
		e.Bootstrap, e.Err, EnvBootstrap)
}

func (e *unreachableError) Unwrap() error { return e.Err }

// Ping checks within DialTimeout that the cluster behind cfg serves this
// client. It first dials every seed over TCP, so a cluster that is not there
// at all is reported at once rather than after the client's retries. When a
// broker accepts the connection but the request is not answered at once, it
// looks for why beside the wait (a login wanted or refused, a TLS mismatch),
// and ends with the first one-line answer: LoginError, TLSError,
// notAnsweringError, or unreachableError when nothing listens.
func Ping(parent context.Context, cfg Config, cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(parent, DialTimeout)
	defer cancel()
	addr, err := dialAny(ctx, cfg.Brokers)
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		return &unreachableError{Bootstrap: cfg.Bootstrap(), Err: err}
	}
	pinged := make(chan error, 1)
	start := time.Now()
	go func() { pinged <- cl.Ping(ctx) }()
	// A healthy local cluster answers in milliseconds; past half a second,
	// look for what is wrong beside the wait, and take whichever ends first.
	diagnosed := make(chan error, 1)
	late := time.AfterFunc(500*time.Millisecond, func() { diagnosed <- diagnose(ctx, cfg, addr, nil) })
	defer late.Stop()
	for err == nil {
		select {
		case err = <-pinged:
			if err == nil {
				return nil
			}
		case found := <-diagnosed:
			if found != nil {
				return found
			}
			diagnosed = nil // nothing wrong found: wait for the ping
		}
	}
	if parent.Err() != nil {
		return parent.Err() // Ctrl-C, not a broken cluster
	}
	if found := diagnose(parent, cfg, addr, err); found != nil {
		return found
	}
	return &notAnsweringError{Bootstrap: cfg.Bootstrap(), Waited: time.Since(start).Round(time.Second), Err: err}
}

// dialAny returns the first address to accept a TCP connection, else the
// first failure.
func dialAny(ctx context.Context, addrs []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	type result struct {
		addr string
		err  error
	}
	results := make(chan result, len(addrs))
	for _, addr := range addrs {
		go func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
			}
			results <- result{addr, err}
		}()
	}
	var first error
	for range addrs {
		r := <-results
		if r.err == nil {
			return r.addr, nil
		}
		if first == nil {
			first = r.err
		}
	}
	if errors.Is(first, syscall.ECONNREFUSED) {
		return "", errors.New("connection refused") // the usual case: say it plainly
	}
	return "", first
}
