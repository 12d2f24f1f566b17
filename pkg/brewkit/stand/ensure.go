package stand

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Ensure makes sure a cluster answers on cfg before a lecture runs, then
// starts the services it names (see StartServices). When no cluster answers
// and cfg is the course cluster with no stand up, it starts the embedded
// stand in the background and says so; when a named service needs real
// Kafka (connect), it starts the real stand `make up` would pick instead.
func (s *Stand) Ensure(ctx context.Context, cfg brewkit.Config, services ...string) error {
	var svcs []Service
	if len(services) > 0 {
		var err error
		if svcs, err = lookupServices(services); err != nil {
			return err
		}
	}
	i := slices.IndexFunc(svcs, func(svc Service) bool { return svc.NeedsKafka })
	if i >= 0 && cfg.Bootstrap() != brewkit.DefaultBootstrap {
		return fmt.Errorf("%s runs against the course stand only, not %s=%s: unset it", svcs[i].Name, brewkit.EnvBootstrap, cfg.Bootstrap())
	}
	var err error
	if i >= 0 {
		err = s.ensureReal(ctx, cfg, svcs[i])
	} else {
		err = s.ensureCluster(ctx, cfg)
	}
	if err != nil || len(services) == 0 {
		return err
	}
	return s.StartServices(ctx, services...)
}

func (s *Stand) ensureCluster(ctx context.Context, cfg brewkit.Config) error {
	if answers(cfg.Brokers) {
		return nil
	}
	if cfg.Bootstrap() != brewkit.DefaultBootstrap {
		return fmt.Errorf("no Kafka answers at %s (%s); check the address or unset it to use the course stand", cfg.Bootstrap(), brewkit.EnvBootstrap)
	}
	if f := s.Current(); f != "" {
		return fmt.Errorf("the %s stand is up but none of its nodes answers; see `make status` and `make start-node N=1`", f)
	}
	s.say("stand: no cluster answers on %s; starting the embedded stand in the background", cfg.Bootstrap())
	s.say("stand: it is a simulation (franz-go kfake): `make down && make up STAND=native` gives real Kafka")
	return s.Up(ctx, Embedded)
}

// ensureReal is ensureCluster for svc, which needs real Kafka: the embedded
// stand will not do, so with none up it starts docker or native.
func (s *Stand) ensureReal(ctx context.Context, cfg brewkit.Config, svc Service) error {
	cur := s.Current()
	if cur != "" {
		if err := kafkaFor(svc, cur); err != nil {
			return err
		}
		return s.ensureCluster(ctx, cfg)
	}
	if answers(cfg.Brokers) {
		return kafkaFor(svc, "") // someone else's cluster on the course's ports
	}
	f, why := Choose(ctx, Auto)
	if f == Embedded {
		return fmt.Errorf("%s needs real Kafka, and only the embedded simulation can run here (%s)", svc.Name, why)
	}
	s.say("stand: no cluster answers on %s and %s needs real Kafka: starting the %s stand", cfg.Bootstrap(), svc.Name, f)
	return s.Up(ctx, f)
}

func answers(addrs []string) bool {
	for _, a := range addrs {
		conn, err := net.DialTimeout("tcp", a, 500*time.Millisecond)
		if err == nil {
			conn.Close()
			return true
		}
	}
	return false
}
