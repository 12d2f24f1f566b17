package stand

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock is the stand lock, .stand/lock: tests of one checkout share the one
// cluster, so a test that only uses the cluster holds it shared, and a test
// that stops, starts or pauses a node (or changes cluster-wide state) holds it
// exclusive. It is an flock(2) lock on an open file, so the kernel releases it
// when the holding process dies, and it works whatever -p go test runs with
// and however many test processes run at once.
//
// flock alone lets sharers overtake a waiting exclusive taker, and with two
// test processes taking turns it could wait for ever; so whoever takes the
// lock passes a gate first (.stand/lock.gate), which an exclusive taker keeps
// until it has the lock: sharers that come after it wait behind it.
type Lock struct {
	f    *os.File
	gate *os.File
}

// OpenLock opens the stand's lock files without taking the lock.
func (s *Stand) OpenLock() (*Lock, error) {
	if err := os.MkdirAll(s.state(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.state("lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the stand lock: %w", err)
	}
	gate, err := os.OpenFile(s.state("lock.gate"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the stand lock: %w", err)
	}
	return &Lock{f: f, gate: gate}, nil
}

// Shared takes the lock shared, waiting for an exclusive holder to finish,
// and for one that waits already.
func (l *Lock) Shared(ctx context.Context) error { return l.pass(ctx, syscall.LOCK_SH) }

// Exclusive takes the lock exclusive, waiting for every other holder. On a
// lock this Lock holds shared, it gives the shared lock up first (flock would
// too: its conversion is not atomic).
func (l *Lock) Exclusive(ctx context.Context) error {
	if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("releasing the stand lock: %w", err)
	}
	return l.pass(ctx, syscall.LOCK_EX)
}

// pass goes through the gate and takes the lock as how says.
func (l *Lock) pass(ctx context.Context, how int) error {
	if err := take(ctx, l.gate, syscall.LOCK_EX, "the stand lock's gate"); err != nil {
		l.f.Close()
		return err
	}
	defer syscall.Flock(int(l.gate.Fd()), syscall.LOCK_UN) //nolint:errcheck // closed on a failed take
	if err := take(ctx, l.f, how, "the stand lock"); err != nil {
		l.gate.Close()
		return err
	}
	return nil
}

// TryExclusive takes the lock exclusive if no one else holds it.
func (l *Lock) TryExclusive() (bool, error) {
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// take flocks f, or gives up when ctx ends: then it closes f, which releases
// whatever the flock call still gets. what names the lock in that error.
func take(ctx context.Context, f *os.File, how int, what string) error {
	fd := int(f.Fd())
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(fd, how) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		f.Close()
		return fmt.Errorf("waiting for %s %s (another test or process holds it): %w", what, f.Name(), ctx.Err())
	}
}

// Close releases the lock.
func (l *Lock) Close() error {
	l.gate.Close()
	return l.f.Close()
}
