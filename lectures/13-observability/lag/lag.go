// Package lag is `make lag`: how far behind each consumer group and share
// group is, in records and in time.
//
// LAG in records says how much work waits; it does not say for how long. A
// group 5,000 records behind on a busy topic may be seconds late, one record
// behind on a quiet topic may be hours late. On-call wants the age of the
// oldest record not yet processed, so per partition Measure reports:
//
//   - COMMITTED: the group's committed offset, the next record it will
//     process; for a share group the share-partition start offset (every
//     record before it is done), which Kafka reports through
//     DescribeShareGroupOffsets;
//   - END: the partition's end offset (high watermark);
//   - LAG = END - COMMITTED; for a share group the lag the broker reports
//     (KIP-1226: records at or after the start offset not yet done), which
//     is END - START less the records already acknowledged beyond the start;
//   - TIME-LAG: now minus the timestamp of the record at COMMITTED, the
//     oldest one not yet processed; 0 when LAG is 0.
//
// Kafka may report a share-partition start offset that trails records the
// group has already acknowledged (on the course's Kafka 4.4 stand: 0 after
// the first 2 of 6 records were acknowledged, with the broker's lag 4). Its
// LAG is exact; its TIME-LAG is then the age of a record already done, more
// than the truth, never less.
//
// To learn that timestamp Measure reads one record per lagging partition:
// one client consumes exactly those offsets and stops as soon as every
// lagging partition gave one record, or when the measurement's time is up.
// A committed offset that retention has deleted is read from the log start
// instead, and the partition says so: its TIME-LAG is then the age of the
// oldest record kept, less than the true one.
//
// Kafka's own tools show the records (kafka-consumer-groups --describe,
// kafka-share-groups --describe); the time lag is what they do not show.
// Collector exports both to Prometheus, for the course's alert rules.
package lag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// DefaultTimeout bounds one measurement: listing the groups, describing each
// group and fetching its offsets, listing the topics' offsets and reading
// the oldest unprocessed records. It stays under Prometheus's default
// scrape timeout (10 s).
const DefaultTimeout = 8 * time.Second

// Kind is how a group consumes, the kind label of the metrics.
type Kind string

const (
	// Consumer is a consumer group: classic, or KIP-848's consumer protocol.
	Consumer Kind = "consumer"
	// Share is a share group (KIP-932, Kafka as a queue).
	Share Kind = "share"
)

// Options say what to measure.
type Options struct {
	// Groups are the groups to measure: a name, or a prefix followed by
	// '*' (brew.kitchen.* is every group whose name starts brew.kitchen.).
	// None: every consumer and share group of the cluster.
	Groups []string
	// Timeout bounds the whole measurement; 0 is DefaultTimeout.
	Timeout time.Duration
	// KeepFor is how long the exporter (Collector) serves a group's last
	// measurement when a scrape cannot measure it; 0: it is missing from
	// that scrape at once.
	KeepFor time.Duration
}

// Partition is one partition a group has committed offsets on or is
// assigned.
type Partition struct {
	Topic     string
	Partition int32
	// Committed is the next offset the group processes (a share group's
	// start offset); -1 when the group has committed none here.
	Committed int64
	End       int64 // the high watermark; -1 when it could not be listed
	// Lag is End - Committed (a share group's: as the broker reports it);
	// -1 when unknown (no commit, or End not listed).
	Lag int64
	// TimeLag is how long ago the oldest unprocessed record (the one at
	// Committed) was written, by its timestamp: 0 when Lag is 0, -1 when
	// unknown (no commit, or no record read in time; Note says why).
	TimeLag time.Duration
	// Oldest is the timestamp of the record TimeLag measures (zero when
	// none was read), and OldestOffset its offset: above Committed when
	// retention deleted the records from Committed on.
	Oldest       time.Time
	OldestOffset int64
	// Note says what a reader of the numbers must know: retention deleted
	// the oldest unprocessed records, a time lag not measured.
	Note string
	Err  error // End or the oldest record could not be listed or read
}

// Group is one group's measurement.
type Group struct {
	Name string
	Kind Kind
	// Type is Kafka's group type: classic, consumer (KIP-848) or share.
	Type       string
	State      string // Stable, Empty, PreparingRebalance...
	Members    int
	Partitions []Partition // by topic, then partition
	// Err: the group could not be described or its offsets fetched (its
	// coordinator did not answer in time, or refused).
	Err error
}

// Lag is the sum of the partitions' known lags.
func (g Group) Lag() int64 {
	var n int64
	for _, p := range g.Partitions {
		n += max(p.Lag, 0)
	}
	return n
}

// MaxTimeLag is the largest time lag of the group's partitions: the age of
// its oldest unprocessed record.
func (g Group) MaxTimeLag() time.Duration {
	var d time.Duration
	for _, p := range g.Partitions {
		d = max(d, p.TimeLag)
	}
	return d
}

// Report is one measurement.
type Report struct {
	At     time.Time // when the time lags were computed ("now")
	Groups []Group   // by name, then kind
	// Warnings are what may be missing from the report: a broker that did
	// not answer ListGroups (its groups are not listed), a pattern that
	// matched no group.
	Warnings []string
}

// Err is the first group's error, or nil.
func (r Report) Err() error {
	for _, g := range r.Groups {
		if g.Err != nil {
			return fmt.Errorf("group %s: %w", g.Name, g.Err)
		}
	}
	return nil
}

// Failed counts the groups not measured.
func (r Report) Failed() int {
	n := 0
	for _, g := range r.Groups {
		if g.Err != nil {
			n++
		}
	}
	return n
}

// Lookup returns group's partition topic/partition.
func (r Report) Lookup(group, topic string, partition int32) (Partition, bool) {
	for _, g := range r.Groups {
		if g.Name != group {
			continue
		}
		for _, p := range g.Partitions {
			if p.Topic == topic && p.Partition == partition {
				return p, true
			}
		}
	}
	return Partition{}, false
}

// Group returns the group named name.
func (r Report) Group(name string) (Group, bool) {
	i := slices.IndexFunc(r.Groups, func(g Group) bool { return g.Name == name })
	if i < 0 {
		return Group{}, false
	}
	return r.Groups[i], true
}

// Matches reports whether group is one that patterns name: no patterns
// match every group; a pattern ending in '*' matches the names it prefixes,
// any other only itself.
func Matches(patterns []string, group string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(group, prefix) || p == group {
			return true
		}
	}
	return false
}

// Measure measures the groups o names (every group when none) on the
// cluster behind cfg within o.Timeout. A group that cannot be described in
// time has its Err set and the others are measured; Measure itself fails
// only when ctx ends or no broker lists the groups.
//
// Measure makes the clients it needs and closes them: a broker that leaves
// one request unanswered holds every later answer on that connection, so
// the groups are described on a client for each coordinator, the topics'
// offsets listed on another and the records read on a third, and the next
// measurement starts afresh.
func Measure(ctx context.Context, cfg brewkit.Config, o Options) (Report, error) {
	timeout := cmp.Or(o.Timeout, DefaultTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Four steps: listing the groups, describing them, listing the
	// offsets, reading. Each may take the time left but a fifth of the
	// timeout for each step after it, so a step that hangs (a coordinator
	// that does not answer) leaves the others theirs, and a step that is
	// merely slow (a busy machine, a broker in a GC pause) is not cut short
	// while the measurement has time. (Fixed shares cut the listing at
	// 0.6 s of 3; on a loaded machine whole measurements took up to 1.7 s,
	// and one that fails leaves its series out of the scrape, which sends
	// every alert on them back to the start of its for:.)
	reserve, later := timeout/5, time.Duration(3)
	step := func() (context.Context, context.CancelFunc) {
		d := time.Until(deadline(ctx)) - later*reserve
		later--
		return context.WithTimeout(ctx, d)
	}
	var r Report
	adm, done, err := newAdmin(cfg)
	if err != nil {
		return r, err
	}
	defer done()

	sctx, scancel := step()
	listed, warnings, err := list(sctx, adm, o.Groups)
	scancel()
	if err := canceled(ctx); err != nil {
		return r, err
	}
	if err != nil {
		return r, err
	}
	r.Warnings = warnings

	sctx, scancel = step()
	r.Groups = describe(sctx, cfg, adm, listed)
	scancel()
	if err := canceled(ctx); err != nil {
		return r, err
	}

	offsets, done, err := newAdmin(cfg)
	if err != nil {
		return r, err
	}
	defer done()
	sctx, scancel = step()
	ends(sctx, offsets, r.Groups)
	scancel()
	if err := canceled(ctx); err != nil {
		return r, err
	}

	sctx, scancel = step()
	r.At = oldest(sctx, cfg, r.Groups)
	scancel()
	if err := canceled(ctx); err != nil {
		return r, err
	}
	slices.SortFunc(r.Groups, func(a, b Group) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(string(a.Kind), string(b.Kind)))
	})
	return r, nil
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// canceled is ctx's error when ctx was cancelled (Ctrl-C), not timed out.
func canceled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return nil
}

// listedGroup is a group to measure: its name and type, or why it cannot be.
type listedGroup struct {
	name, typ, state string
	err              error
}

// list finds the groups patterns name. A name given in full is measured even
// when no broker lists it (it then says why); a prefix takes the groups
// listed. Groups of types other than classic, consumer and share (streams)
// are left out unless named.
func list(ctx context.Context, adm *kadm.Client, patterns []string) ([]listedGroup, []string, error) {
	listed, err := bounded(ctx, func() (kadm.ListedGroups, error) { return adm.ListGroups(ctx) })
	var warnings []string
	var shard *kadm.ShardErrors
	switch {
	case err == nil:
	case errors.As(err, &shard) && !shard.AllFailed:
		for _, se := range shard.Errs {
			warnings = append(warnings, fmt.Sprintf("node %d did not list its groups (%v): the groups it coordinates are missing", se.Broker.NodeID, se.Err))
		}
	default:
		return nil, nil, fmt.Errorf("listing the groups: %w", short(err))
	}
	var out []listedGroup
	for _, g := range listed.Sorted() {
		if !Matches(patterns, g.Group) {
			continue
		}
		typ := groupType(g)
		if typ == "" && !slices.Contains(patterns, g.Group) {
			continue
		}
		out = append(out, listedGroup{name: g.Group, typ: typ, state: g.State})
	}
	for _, p := range patterns {
		if strings.HasSuffix(p, "*") {
			if !slices.ContainsFunc(out, func(g listedGroup) bool { return Matches([]string{p}, g.name) }) {
				warnings = append(warnings, fmt.Sprintf("no group matches %s", p))
			}
			continue
		}
		if _, ok := listed[p]; ok {
			continue
		}
		why := errors.New("no such group: no broker lists it")
		if len(warnings) > 0 {
			why = errors.New("not listed: no such group, or its coordinator did not answer ListGroups")
		}
		// Kafka lists only the groups the login may describe: the
		// group's coordinator says whether this one is someone else's.
		if _, err := bounded(ctx, func() (kadm.OffsetResponses, error) { return adm.FetchOffsets(ctx, p) }); errors.Is(err, kerr.GroupAuthorizationFailed) {
			why = fmt.Errorf("not listed: %w", err)
		}
		out = append(out, listedGroup{name: p, err: why})
	}
	for i, g := range out {
		if g.typ == "" && g.err == nil {
			out[i].err = fmt.Errorf("a %s group: lag measures consumer and share groups", listed[g.name].GroupType)
		}
	}
	return out, warnings, nil
}

// groupType is classic, consumer or share, or "" for a group of another
// type. A broker older than 3.8 does not say: then it is classic.
func groupType(g kadm.ListedGroup) string {
	switch g.GroupType {
	case "classic", "consumer", "share":
		return g.GroupType
	case "":
		if g.ProtocolType == "share" {
			return "share"
		}
		return "classic"
	}
	return ""
}

// describe describes every group and fetches its offsets, each group on its
// own, at once: a coordinator that does not answer fails its groups only.
//
// The coordinators are found first, all in one request on adm, and each
// coordinator's groups are described on a client of their own. On one
// shared client a lookup kgo sends to any broker can land behind a
// request the coordinator left unanswered, and then waits as long.
func describe(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, listed []listedGroup) []Group {
	groups := make([]Group, len(listed))
	var names []string
	for i, l := range listed {
		groups[i] = Group{Name: l.name, Type: l.typ, State: l.state, Kind: Consumer, Err: l.err}
		if l.typ == "share" {
			groups[i].Kind = Share
		}
		if l.err == nil {
			names = append(names, l.name)
		}
	}
	if len(names) == 0 {
		return groups
	}
	coordinators := adm.FindGroupCoordinators(ctx, names...)
	clients := &coordinatorClients{cfg: cfg, m: map[int32]*kadm.Client{}}
	defer clients.close()
	sem := make(chan struct{}, 8)
	type described struct {
		i int
		g Group
	}
	results := make(chan described, len(listed))
	pending := map[int]bool{}
	for i := range groups {
		if groups[i].Err != nil {
			continue
		}
		c := coordinators[groups[i].Name]
		if c.Err != nil {
			groups[i].Err = coordinatorErr(ctx, fmt.Errorf("finding its coordinator: %w", short(c.Err)))
			continue
		}
		cl, err := clients.of(c.NodeID)
		if err != nil {
			groups[i].Err = err
			continue
		}
		pending[i] = true
		go func(adm *kadm.Client, g Group) {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				g.Err = coordinatorErr(ctx, ctx.Err())
				results <- described{i, g}
				return
			}
			if err := describeOne(ctx, adm, &g); err != nil {
				g.Err = coordinatorErr(ctx, err)
			}
			results <- described{i, g}
		}(cl, groups[i])
	}
	ended := ctx.Done()
	var late <-chan time.Time // after ctx ends, a moment for answers under way
	for len(pending) > 0 {
		select {
		case r := <-results:
			groups[r.i] = r.g
			delete(pending, r.i)
		case <-ended:
			late, ended = time.After(100*time.Millisecond), nil
		case <-late:
			// kgo may keep a request to a broker that does not answer
			// past its context; its group is not measured in time.
			for i := range pending {
				groups[i].Err = errors.New("no answer within the measurement's time")
			}
			return groups
		}
	}
	return groups
}

// newAdmin is an admin client for cfg and what closes it: without waiting,
// since a request a broker left unanswered may hold Close until kgo's own
// request timeout.
func newAdmin(cfg brewkit.Config) (*kadm.Client, func(), error) {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), func() { go cl.Close() }, nil
}

// coordinatorClients is an admin client for each coordinator, made when
// first asked for.
type coordinatorClients struct {
	cfg   brewkit.Config
	m     map[int32]*kadm.Client
	dones []func()
}

func (c *coordinatorClients) of(node int32) (*kadm.Client, error) {
	if adm, ok := c.m[node]; ok {
		return adm, nil
	}
	adm, done, err := newAdmin(c.cfg)
	if err != nil {
		return nil, err
	}
	c.m[node], c.dones = adm, append(c.dones, done)
	return adm, nil
}

func (c *coordinatorClients) close() {
	for _, done := range c.dones {
		done()
	}
}

// coordinatorErr says that a request for a group was not answered in time;
// the node it waited on is in err when kadm says which it was: usually the
// group's coordinator, or the broker kgo asked where the coordinator is.
func coordinatorErr(ctx context.Context, err error) error {
	if ctx.Err() == nil || !errors.Is(err, context.DeadlineExceeded) {
		return short(err)
	}
	return fmt.Errorf("no answer within the measurement's time (%w)", short(err))
}

// short is err with kadm's "request X has 1 separate shard errors, first:"
// said as "X: node N:".
func short(err error) error {
	var se *kadm.ShardErrors
	if !errors.As(err, &se) || len(se.Errs) != 1 {
		return err
	}
	msg := strings.Replace(err.Error(), se.Error(), fmt.Sprintf("%s to node %d: %v", se.Name, se.Errs[0].Broker.NodeID, se.Errs[0].Err), 1)
	return wrapped{msg, err}
}

type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.err }

// described is group's entry of a describe answer (classic, consumer or
// share: one shape, three types), or why there is none.
func described[T any](ds map[string]T, err error, group string, errOf func(T) error) (T, error) {
	var d T
	if err != nil {
		return d, fmt.Errorf("describing: %w", err)
	}
	d, ok := ds[group]
	if !ok {
		return d, errors.New("describing: not in the answer")
	}
	if err := errOf(d); err != nil {
		return d, fmt.Errorf("describing: %w", err)
	}
	return d, nil
}

func describeOne(ctx context.Context, adm *kadm.Client, g *Group) error {
	assigned := kadm.TopicsSet{}
	switch g.Type {
	case "classic":
		ds, err := adm.DescribeGroups(ctx, g.Name)
		d, err := described(ds, err, g.Name, func(d kadm.DescribedGroup) error { return d.Err })
		if err != nil {
			return err
		}
		g.State, g.Members = d.State, len(d.Members)
		assigned = d.AssignedPartitions()
	case "consumer":
		ds, err := adm.DescribeConsumerGroups(ctx, g.Name)
		d, err := described(ds, err, g.Name, func(d kadm.DescribedConsumerGroup) error { return d.Err })
		if err != nil {
			return err
		}
		g.State, g.Members = d.State, len(d.Members)
		assigned = d.AssignedPartitions()
	case "share":
		ds, err := adm.DescribeShareGroups(ctx, g.Name)
		d, err := described(ds, err, g.Name, func(d kadm.DescribedShareGroup) error { return d.Err })
		if err != nil {
			return err
		}
		g.State, g.Members = d.GroupState, len(d.Members)
		assigned = d.AssignedPartitions()
		return shareOffsets(ctx, adm, g, assigned)
	}
	committed, err := adm.FetchOffsets(ctx, g.Name)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return fmt.Errorf("fetching its committed offsets: %w", err)
	}
	parts := map[tp]*Partition{}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.At < 0 {
			return
		}
		parts[tp{o.Topic, o.Partition}] = &Partition{Topic: o.Topic, Partition: o.Partition, Committed: o.At}
	})
	g.Partitions = collect(parts, assigned)
	return nil
}

// shareOffsets fills a share group's partitions from its share-partition
// start offsets and the lag the broker reports for each.
func shareOffsets(ctx context.Context, adm *kadm.Client, g *Group, assigned kadm.TopicsSet) error {
	ds, err := adm.DescribeShareGroupOffsets(ctx, g.Name)
	if err != nil {
		return fmt.Errorf("describing its share-partition offsets: %w", err)
	}
	d, ok := ds[g.Name]
	if !ok {
		return errors.New("describing its share-partition offsets: not in the answer")
	}
	if d.Err != nil {
		return fmt.Errorf("describing its share-partition offsets: %w", d.Err)
	}
	parts := map[tp]*Partition{}
	for _, o := range d.Offsets.Sorted() {
		p := &Partition{Topic: o.Topic, Partition: o.Partition, Committed: o.StartOffset, Lag: -1, Err: o.Err}
		if o.StartOffset >= 0 && o.Lag >= 0 {
			p.Lag = o.Lag
		}
		parts[tp{o.Topic, o.Partition}] = p
	}
	g.Partitions = collect(parts, assigned)
	return nil
}

type tp struct {
	topic     string
	partition int32
}

// collect sorts the partitions with offsets, and adds the ones assigned
// without (Committed -1).
func collect(parts map[tp]*Partition, assigned kadm.TopicsSet) []Partition {
	for t, ps := range assigned {
		if t == "" {
			continue // a topic known by its id alone (kfake's KIP-848 describe): its commits are listed all the same
		}
		for p := range ps {
			if _, ok := parts[tp{t, p}]; !ok {
				parts[tp{t, p}] = &Partition{Topic: t, Partition: p, Committed: -1, Lag: -1}
			}
		}
	}
	out := make([]Partition, 0, len(parts))
	for _, p := range parts {
		p.End, p.TimeLag, p.OldestOffset = -1, -1, -1
		if p.Committed < 0 {
			p.Lag = -1
		}
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Partition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// ends lists the start and end offsets of every topic the groups read,
// computes each partition's lag, and sets OldestOffset, where oldest reads
// a lagging partition's oldest unprocessed record: the committed offset,
// or the log start when retention deleted it.
func ends(ctx context.Context, adm *kadm.Client, groups []Group) {
	var topics []string
	for _, g := range groups {
		for _, p := range g.Partitions {
			topics = append(topics, p.Topic)
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	if len(topics) == 0 {
		return
	}
	var (
		end, start kadm.ListedOffsets
		endErr     error
		wg         sync.WaitGroup
	)
	// A start offset not listed only costs the retention note: the
	// record is then read from the committed offset, and kgo starts at
	// the log start if it is gone.
	wg.Go(func() {
		end, endErr = bounded(ctx, func() (kadm.ListedOffsets, error) { return adm.ListEndOffsets(ctx, topics...) })
	})
	wg.Go(func() {
		start, _ = bounded(ctx, func() (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, topics...) })
	})
	wg.Wait()
	for gi := range groups {
		g := &groups[gi]
		for pi := range g.Partitions {
			p := &g.Partitions[pi]
			e, ok := end.Lookup(p.Topic, p.Partition)
			switch {
			case ok && e.Err == nil:
				p.End = e.Offset
			case ok:
				p.Err = fmt.Errorf("listing its end offset: %w", e.Err)
			case endErr != nil && ctx.Err() != nil:
				p.Err = fmt.Errorf("its end offset was not listed within the measurement's time (%w)", short(endErr))
			case endErr != nil:
				p.Err = fmt.Errorf("listing its end offset: %w", short(endErr))
			default:
				p.Err = fmt.Errorf("listing its end offset: %w", kerr.UnknownTopicOrPartition)
			}
			if p.Committed < 0 || p.End < 0 {
				p.Lag = -1
				continue
			}
			if g.Kind == Consumer || p.Lag < 0 {
				p.Lag = max(p.End-p.Committed, 0)
			}
			p.OldestOffset = p.Committed
			if s, ok := start.Lookup(p.Topic, p.Partition); ok && s.Err == nil {
				p.OldestOffset = max(p.Committed, s.Offset) // where oldest reads from
				if s.Offset > p.Committed && p.Lag > 0 {
					p.Note = fmt.Sprintf("offsets %d to %d are deleted (retention): TIME-LAG is the oldest kept record's, at %d", p.Committed, s.Offset-1, s.Offset)
				}
			}
			if p.Lag == 0 {
				p.TimeLag, p.OldestOffset = 0, -1
			}
		}
	}
}

// bounded returns fn's result, or ctx's error as soon as ctx ends: kgo may
// keep waiting past its context on a connection whose broker left an
// earlier request unanswered.
func bounded[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
