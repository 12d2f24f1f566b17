// Package store keeps the analytics service's windows in a local store
// (Pebble, an embedded key-value store: RocksDB's ideas in Go) and writes
// every change of them to a compacted changelog topic, partition p of the
// changelog for partition p of the orders. The local store is a cache that
// makes a restart fast; the changelog is the state's truth, from which a
// new instance, or one whose disk is gone, restores.
//
// A batch reaches the local store only after Kafka has taken it (the
// transaction committed, or the offsets after the writes), together with
// the changelog offset it reached, so the local store is always a prefix of
// the committed changelog: after any crash, replaying the changelog from
// that offset makes it whole again.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Partition is what a partition's state holds besides its windows: the
// newest event time seen (which decides what is too late) and what
// happened to its orders. It goes to the changelog under MetaKey.
type Partition struct {
	Stream time.Time     `json:"stream_time"`
	Counts window.Counts `json:"counts"`
}

// MetaKey is the changelog key of a partition's Partition record.
const MetaKey = "~partition"

// local is a partition's Partition in the local store, with the changelog
// offset the store has applied up to (not included).
type local struct {
	Partition
	Applied int64 `json:"applied"`
}

// Store is the local store of one instance of the service.
type Store struct {
	Dir string
	db  *pebble.DB
}

// Open opens (or creates) the local store in dir.
func Open(dir string) (*Store, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
	// Another process holds the store's lock file (EWOULDBLOCK), or this
	// one does (Pebble says so in words).
	if errors.Is(err, syscall.EWOULDBLOCK) || err != nil && strings.Contains(err.Error(), "lock held") {
		return nil, fmt.Errorf("the local store %s is in use by another instance: give each instance its own -dir (and -id)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the local store %s: %w", dir, err)
	}
	return &Store{Dir: dir, db: db}, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Size is the bytes the store's files take on disk.
func (s *Store) Size() int64 {
	m := s.db.Metrics()
	return int64(m.DiskSpaceUsage())
}

func windowKey(p int32, k []byte) []byte { return append(fmt.Appendf(nil, "w/%04d/", p), k...) }
func metaKey(p int32) []byte             { return fmt.Appendf(nil, "m/%04d", p) }

// Window is the revenue of window k of partition p so far.
func (s *Store) Window(p int32, k window.Key) (window.Revenue, error) {
	var r window.Revenue
	err := s.get(windowKey(p, k.Bytes()), &r)
	return r, err
}

// Meta is partition p's state and the changelog offset applied (0: none).
func (s *Store) Meta(p int32) (Partition, int64, error) {
	var l local
	err := s.get(metaKey(p), &l)
	return l.Partition, l.Applied, err
}

func (s *Store) get(key []byte, v any) error {
	b, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("local store: %w", err)
	}
	defer closer.Close()
	return json.Unmarshal(b, v)
}

// Changes is what a batch changed in one partition.
type Changes struct {
	Windows map[window.Key]window.Revenue
	Meta    Partition
}

// Apply writes a committed batch: each partition's changes and the
// changelog offset it has reached.
func (s *Store) Apply(changes map[int32]*Changes, applied map[int32]int64) error {
	b := s.db.NewBatch()
	defer b.Close()
	for p, c := range changes {
		for k, r := range c.Windows {
			v, _ := json.Marshal(r)
			if err := b.Set(windowKey(p, k.Bytes()), v, nil); err != nil {
				return err
			}
		}
		v, _ := json.Marshal(local{c.Meta, applied[p]})
		if err := b.Set(metaKey(p), v, nil); err != nil {
			return err
		}
	}
	// NoSync: the write-ahead log reaches the OS at once, so a killed
	// process loses nothing; a power cut may, and the changelog restores it.
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("local store: %w", err)
	}
	return nil
}

// Totals is every window the store holds, and each partition's state.
func (s *Store) Totals() (window.Totals, map[int32]Partition, error) {
	t, parts := window.Totals{}, map[int32]Partition{}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		var p int32
		switch {
		case len(k) > 7 && k[0] == 'w':
			if _, err := fmt.Sscanf(string(k[2:6]), "%d", &p); err != nil {
				return nil, nil, fmt.Errorf("local store key %q: %w", k, err)
			}
			wk, err := window.ParseKey(k[7:])
			if err != nil {
				return nil, nil, err
			}
			var r window.Revenue
			if err := json.Unmarshal(it.Value(), &r); err != nil {
				return nil, nil, err
			}
			t[wk] = r
		case k[0] == 'm':
			if _, err := fmt.Sscanf(string(k[2:]), "%d", &p); err != nil {
				return nil, nil, fmt.Errorf("local store key %q: %w", k, err)
			}
			var l local
			if err := json.Unmarshal(it.Value(), &l); err != nil {
				return nil, nil, err
			}
			parts[p] = l.Partition
		}
	}
	return t, parts, it.Error()
}

// Remove deletes a local store's files (the store must be closed).
func Remove(dir string) error { return os.RemoveAll(dir) }

// SortedKeys is t's keys by shop, then time.
func SortedKeys(t window.Totals) []window.Key {
	return slices.SortedFunc(maps.Keys(t), func(a, b window.Key) int {
		if c := strings.Compare(a.Shop, b.Shop); c != 0 {
			return c
		}
		return a.Start.Compare(b.Start)
	})
}

// quiet is Pebble's logger: it says nothing, except a fatal error.
type quiet struct{}

func (quiet) Infof(string, ...any)           {}
func (quiet) Errorf(string, ...any)          {}
func (quiet) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
