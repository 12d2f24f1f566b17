package brewkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a program's body the way every course program behaves: ctx ends
// at Ctrl-C (or SIGTERM), cfg comes from the environment, and a failure is
// one line, "name: error", with exit status 1. Stopping with Ctrl-C is not a
// failure. Flags are parsed (and usage errors answered with status 2) before.
func Main(name string, body func(ctx context.Context, cfg Config) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cfg, err := FromEnv()
	if err == nil {
		err = body(ctx, cfg)
	}
	interrupted := ctx.Err() != nil
	stop()
	if err != nil && !(interrupted && errors.Is(err, context.Canceled)) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
