package stand

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Ensure makes sure a cluster answers on cfg before a lecture runs. When none
// does and cfg is the course cluster with no stand up, it starts the embedded
// stand in the background and says so.
func (s *Stand) Ensure(ctx context.Context, cfg brewkit.Config) error {
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
