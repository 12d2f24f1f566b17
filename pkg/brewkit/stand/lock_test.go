package stand

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The child half of TestLockExcludesAnotherProcess: it tries the lock of the
// stand at $BREW_LOCK_CHILD and prints whether it got it.
func init() {
	root := os.Getenv("BREW_LOCK_CHILD")
	if root == "" {
		return
	}
	l, err := (&Stand{Root: root}).OpenLock()
	if err == nil {
		var ok bool
		if ok, err = l.TryExclusive(); err == nil {
			os.Stdout.WriteString(map[bool]string{true: "got it\n", false: "held elsewhere\n"}[ok])
			os.Exit(0)
		}
	}
	os.Stdout.WriteString(err.Error() + "\n")
	os.Exit(1)
}

func tryFromAnotherProcess(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BREW_LOCK_CHILD="+root)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

func TestLockExcludesAnotherProcess(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	require.Equal(t, "got it", tryFromAnotherProcess(t, s.Root), "nobody holds it yet")

	l, err := s.OpenLock()
	require.NoError(t, err)
	require.NoError(t, l.Exclusive(ctx))
	require.Equal(t, "held elsewhere", tryFromAnotherProcess(t, s.Root), "an exclusive holder keeps every other process out")
	require.NoError(t, l.Close())
	require.Equal(t, "got it", tryFromAnotherProcess(t, s.Root), "closing releases it")

	l, err = s.OpenLock()
	require.NoError(t, err)
	require.NoError(t, l.Shared(ctx))
	require.Equal(t, "held elsewhere", tryFromAnotherProcess(t, s.Root), "a shared holder keeps exclusive holders out")
	require.NoError(t, l.Close())
}

func TestLockWaitEndsWithTheContext(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	holder, err := s.OpenLock()
	require.NoError(t, err)
	defer holder.Close()
	require.NoError(t, holder.Exclusive(context.Background()))

	waiter, err := s.OpenLock()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = waiter.Shared(ctx)
	require.ErrorContains(t, err, "another test or process holds it")
	require.Less(t, time.Since(start), 2*time.Second)
}

// A sharer that comes after a waiting exclusive taker waits behind it, so
// test processes taking turns with the shared lock cannot keep a fault test
// out for ever (flock alone would let them).
func TestLockSharersQueueBehindAWaitingExclusiveTaker(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	open := func() *Lock {
		l, err := s.OpenLock()
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return l
	}
	first, taker, late := open(), open(), open()
	require.NoError(t, first.Shared(context.Background()))

	got := make(chan error, 1)
	go func() { got <- taker.Exclusive(context.Background()) }()
	require.Eventually(t, func() bool { // the taker is at the gate, waiting for first
		l := open()
		ok, err := tryGate(l)
		return err == nil && !ok
	}, 5*time.Second, 10*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.Error(t, late.Shared(ctx), "a sharer must not overtake the waiting exclusive taker")

	require.NoError(t, first.Close())
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the exclusive taker did not get the lock once the sharer left")
	}
	again := open()
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.Error(t, again.Shared(ctx), "the exclusive holder keeps sharers out")
	require.NoError(t, taker.Close())
	require.NoError(t, open().Shared(context.Background()), "free again once the exclusive holder leaves")
}

// tryGate reports whether the gate is free (and leaves it free).
func tryGate(l *Lock) (bool, error) {
	err := syscall.Flock(int(l.gate.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, syscall.Flock(int(l.gate.Fd()), syscall.LOCK_UN)
}
