package brewkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// StopGrace is how long a program may take to stop after Ctrl-C before Main
// ends it anyway.
const StopGrace = time.Second

// Main runs a program's body the way every course program behaves: ctx ends
// at Ctrl-C (or SIGTERM), cfg comes from the environment, and a failure is
// one line, "name: error", with exit status 1. Flags are parsed (and usage
// errors answered with status 2) before.
//
// Ctrl-C ends the program within StopGrace with status 130 (SIGTERM: 143) and
// the line "name: interrupted", followed by what the program leaves behind
// when its body returned a LeftBehind error.
func Main(name string, body func(ctx context.Context, cfg Config) error) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan error, 1)
	var cfg Config
	go func() {
		var err error
		if cfg, err = FromEnv(); err == nil {
			err = body(ctx, cfg)
		}
		done <- err
	}()

	var err error
	select {
	case err = <-done:
	case sig := <-sigs:
		cancel()
		select {
		case err = <-done:
		case <-time.After(StopGrace):
		case <-sigs: // a second Ctrl-C: stop waiting
		}
		msg := "interrupted"
		if left := (*leftBehindError)(nil); errors.As(err, &left) {
			msg += "; " + left.What
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", name, msg)
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", name, withRemedy(err, cfg))
		os.Exit(1)
	}
}

// withRemedy is err's text, with what to do added for the Kafka errors any
// program may meet that say nothing of a remedy themselves.
func withRemedy(err error, cfg Config) string {
	msg := err.Error()
	switch {
	case errors.Is(err, kgo.ErrRecordTimeout):
		return fmt.Sprintf("%s: no acknowledgement within %s=%s; is a node paused or overloaded? `make status` shows the nodes",
			msg, EnvTimeout, cfg.Bound())
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Sprintf("%s: no answer within %s=%s; is a node paused or overloaded? `make status` shows the nodes",
			msg, EnvTimeout, cfg.Bound())
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.GroupAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		who := "this client"
		if cfg.User != "" {
			who = EnvUser + "=" + cfg.User
		}
		return fmt.Sprintf("%s: the cluster's ACLs do not allow %s this; its admin grants it (kafka-acls), or log in as another user", msg, who)
	}
	return msg
}

// leftBehindError says what a program stopped by Ctrl-C leaves behind and how
// to clean it up ("node 2 is stopped: make restore").
type leftBehindError struct {
	Err  error
	What string
}

func (e *leftBehindError) Error() string { return e.Err.Error() + "; " + e.What }
func (e *leftBehindError) Unwrap() error { return e.Err }

// LeftBehind wraps err, when it is a cancellation, with what the program
// leaves behind; other errors pass through.
func LeftBehind(err error, what string) error {
	if err == nil || !errors.Is(err, context.Canceled) {
		return err
	}
	return &leftBehindError{Err: err, What: what}
}

// Crash ends this process the way a power cut or the OOM killer would:
// SIGKILL to itself. No deferred code, no signal handler, no clean leave from
// a group runs. The drills that prove what survives a crash use it.
func Crash() {
	if err := syscall.Kill(os.Getpid(), syscall.SIGKILL); err != nil {
		panic(fmt.Sprintf("crashing: %v", err))
	}
	select {} // SIGKILL cannot be caught: the process ends here
}

// Command returns command[0] run with command[1:] and args as a child
// program against cfg's cluster: KAFKA_BOOTSTRAP set to cfg's brokers, the
// rest of the environment inherited, its stderr the caller's.
func Command(ctx context.Context, cfg Config, command []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, command[0], append(slices.Clone(command[1:]), args...)...)
	cmd.Env = append(cmd.Environ(), EnvBootstrap+"="+cfg.Bootstrap())
	cmd.Stderr = os.Stderr
	return cmd
}

// Crashed reports whether err, from waiting for a child process, says it
// ended by SIGKILL: a Crash, or a kill -9 from outside.
func Crashed(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
