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
// when the holding process dies, and it works whatever -p go test runs with.
type Lock struct {
	f *os.File
}

// OpenLock opens the stand's lock file without taking the lock.
func (s *Stand) OpenLock() (*Lock, error) {
	if err := os.MkdirAll(s.state(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.state("lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the stand lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Shared takes the lock shared, waiting for an exclusive holder to finish.
func (l *Lock) Shared(ctx context.Context) error { return l.take(ctx, syscall.LOCK_SH) }

// Exclusive takes the lock exclusive, waiting for every other holder. On a
// lock this Lock holds shared, it converts it (not atomically: flock drops the
// shared lock first).
func (l *Lock) Exclusive(ctx context.Context) error { return l.take(ctx, syscall.LOCK_EX) }

// TryExclusive takes the lock exclusive if no one else holds it.
func (l *Lock) TryExclusive() (bool, error) {
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func (l *Lock) take(ctx context.Context, how int) error {
	fd := int(l.f.Fd())
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(fd, how) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// The flock call goes on; closing the file releases what it gets.
		l.f.Close()
		return fmt.Errorf("waiting for the stand lock %s (another test or process holds it): %w", l.f.Name(), ctx.Err())
	}
}

// Close releases the lock.
func (l *Lock) Close() error { return l.f.Close() }
