package scale

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
)

// This file is the harness that runs the instances in this process: it
// starts and stops them, reads a standby's warm-up from its progress
// lines, and waits for the group, saying what it sees, until a look at it
// holds or an instance fails. The looks at the group (settled, caughtUp)
// and the orders' writes are in scale.go.

// running is one instance's goroutine.
type running struct {
	inst   *Instance
	cancel context.CancelFunc
	ended  chan struct{}
	err    error
}

// standby is the line analytics says once a standby's warm-up restore ends.
var standby = regexp.MustCompile(`^analytics (\S+): standby: read (\d+) changelog records of partitions \[([0-9 ]*)\] in (\S+) before joining`)

// parseWarmUp reads a standby's warm-up from its line, if line is one.
func parseWarmUp(line string) (store.Restored, bool) {
	m := standby.FindStringSubmatch(line)
	if m == nil {
		return store.Restored{}, false
	}
	var r store.Restored
	r.Records, _ = strconv.Atoi(m[2])
	for _, f := range strings.Fields(m[3]) {
		p, _ := strconv.Atoi(f)
		r.Partitions = append(r.Partitions, int32(p))
	}
	r.Took, _ = time.ParseDuration(m[4])
	return r, true
}

// start starts instance id, its local store in a folder of its own.
func (g *group) start(ctx context.Context, id string, joined int, warm bool) {
	c := g.svc
	c.ID, c.Dir, c.Warm = id, filepath.Join(g.dir, id), warm
	ictx, cancel := context.WithCancel(ctx)
	r := &running{inst: &Instance{ID: id, Joined: joined, Warm: warm}, cancel: cancel, ended: make(chan struct{})}
	g.all = append(g.all, r)
	what := "cold: an empty local store"
	if warm {
		what = "a standby: it restores every changelog partition before joining"
	}
	g.say(fmt.Sprintf("instance %s starts (%s)", id, what))
	go func() {
		defer close(r.ended)
		st, err := analytics.Run(ictx, g.cfg, c, func(line string) {
			if w, ok := parseWarmUp(line); ok {
				r.inst.WarmUp = w
			}
			g.say(line)
		})
		r.inst.Stats = st
		if err != nil && ictx.Err() == nil {
			r.err = fmt.Errorf("instance %s: %w", id, err)
			g.once.Do(func() { close(g.done) })
		}
	}()
}

// stop stops every instance and waits for them.
func (g *group) stop() {
	for _, r := range g.all {
		r.cancel()
	}
	for _, r := range g.all {
		<-r.ended
	}
}

// failed is the first instance's failure, if one failed.
func (g *group) failed() error {
	select {
	case <-g.done:
		for _, r := range g.all {
			<-r.ended
			if r.err != nil {
				return r.err
			}
		}
	default:
	}
	return nil
}

// check looks at the group once: done when the condition holds, with what
// it saw.
type check func(ctx context.Context) (owners map[string][]int32, done bool, saw string, err error)

// waitFor polls check until it holds, an instance fails or Wait passes;
// it says what it sees when that changes, at most every second.
func (g *group) waitFor(ctx context.Context, what string, c check) (map[string][]int32, error) {
	deadline := time.Now().Add(Wait)
	var said string
	var saidAt time.Time
	g.say("waiting for " + what)
	for {
		if err := g.failed(); err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, g.cfg.Bound())
		owners, done, saw, err := c(cctx)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil && done {
			return owners, nil
		}
		if err != nil {
			saw = err.Error()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("waiting for %s: not within %s; last seen: %s", what, Wait, saw)
		}
		if saw != said && time.Since(saidAt) >= time.Second {
			g.say("  " + saw)
			said, saidAt = saw, time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ownersText is "a [0 1 2] b [3 4 5]".
func ownersText(owners map[string][]int32) string {
	if len(owners) == 0 {
		return "no members"
	}
	var s []string
	for _, id := range slices.Sorted(maps.Keys(owners)) {
		s = append(s, fmt.Sprintf("%s %v", id, owners[id]))
	}
	return strings.Join(s, ", ")
}
