package brewkit

import (
	"context"
	"errors"
	"fmt"
	"net"
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
// quickly), then opts: for constructors other than NewClient, such as
// kgo.NewGroupTransactSession.
func ClientOpts(cfg Config, opts ...kgo.Opt) []kgo.Opt {
	all := append(cfg.Opts(),
		kgo.ClientID("brew-course"),
		kgo.DialTimeout(3*time.Second),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
	return append(all, opts...)
}

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

// UnreachableError says that no broker of the cluster answered.
type UnreachableError struct {
	Bootstrap string
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("no Kafka answers at %s (%v): start a stand with `make up` in the repository root, or point %s at a cluster",
		e.Bootstrap, e.Err, EnvBootstrap)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Ping checks within DialTimeout that the cluster behind cfg answers a request.
// It first dials every seed over TCP, so a cluster that is not there at all is
// reported at once rather than after the client's retries.
func Ping(parent context.Context, cfg Config, cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(parent, DialTimeout)
	defer cancel()
	if err := dialAny(ctx, cfg.Brokers); err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		return &UnreachableError{Bootstrap: cfg.Bootstrap(), Err: err}
	}
	if err := cl.Ping(ctx); err != nil {
		if parent.Err() != nil {
			return parent.Err() // Ctrl-C, not an unreachable cluster
		}
		if cfg.SASL != "" {
			// The port answers but the request does not: most likely the
			// login (a broker drops the connection of a failed SASL login).
			return fmt.Errorf("Kafka at %s accepts connections but not this client (%v): check the SASL login %s=%s %s=%s and %s",
				cfg.Bootstrap(), err, EnvSASL, cfg.SASL, EnvUser, cfg.User, EnvPassword)
		}
		return &UnreachableError{Bootstrap: cfg.Bootstrap(), Err: err}
	}
	return nil
}

// dialAny returns nil as soon as one address accepts a TCP connection, else
// the first failure.
func dialAny(ctx context.Context, addrs []string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	results := make(chan error, len(addrs))
	for _, addr := range addrs {
		go func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
			}
			results <- err
		}()
	}
	var first error
	for range addrs {
		err := <-results
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if errors.Is(first, syscall.ECONNREFUSED) {
		return errors.New("connection refused") // the usual case: say it plainly
	}
	return first
}
