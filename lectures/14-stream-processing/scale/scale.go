// Package scale shows the analytics service scaling out: two, then three
// instances of it in one consumer group share the orders' partitions, and
// each restores from the changelog only the state of the partitions it
// gets. The instances run in this process, each with a local store of its
// own; the orders come in three chunks, and before each chunk after the
// first a new instance joins: b cold (an empty local store: it reads its
// partitions' whole changelog when it takes them), then c as a standby (it
// read every changelog partition before joining, so at takeover it reads
// only what changed since). At the end the changelog's windows are held to
// the batch recount.
package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Partitions is the orders' topic's (and so the changelog's and the
// output's) partition count.
const Partitions = 6

// Chunks is how many chunks the orders are written in: one per instance.
const Chunks = 3

// Wait bounds each wait for the group: for a new instance to get its
// partitions, for the lag to reach 0.
const Wait = time.Minute

// Config is one run.
type Config struct {
	Plan     till.Plan
	Dir      string       // the instances' local stores go to a folder of the run's own inside; "" is a temporary folder
	Progress func(string) // progress lines; nil is quiet
}

// Defaults: 6,000 orders of 12 shops over 30 minutes of event time, enough
// changelog for a restore to read hundreds of records.
var Defaults = Config{Plan: till.Plan{Shops: 12, Orders: 6000, Minutes: 30, OutOfOrder: 0.05, TooLate: 0.02, Seed: 14}}

// Instance is one instance of the service and what it did.
type Instance struct {
	ID     string          `json:"id"`
	Joined int             `json:"joined_after_chunk"` // chunks written (and counted) before it started: 0, 1, 2
	Warm   bool            `json:"warm"`               // a standby: restored every changelog partition before joining
	WarmUp store.Restored  `json:"warm_up"`            // that restore (a standby's only)
	Stats  analytics.Stats `json:"stats"`
}

// Takeover is what the instance's restores read on taking partitions: for a
// standby, not counting its warm-up.
func (i Instance) Takeover() (records int, took time.Duration) { return i.Stats.Restored() }

// Phase is the group once a chunk was counted: who owned which partitions.
type Phase struct {
	Chunk  int                `json:"chunk"`
	Orders int                `json:"orders"`
	Owners map[string][]int32 `json:"owners"` // instance id: its partitions
	Took   time.Duration      `json:"took"`   // from writing the chunk to lag 0
}

// Result is the run's outcome.
type Result struct {
	In        string        `json:"in"`
	Plan      till.Plan     `json:"plan"`
	Written   till.Written  `json:"written"`
	Phases    []Phase       `json:"phases"`
	Instances []Instance    `json:"instances"`
	Recount   window.Counts `json:"recount"`
	Windows   int           `json:"windows"` // the recount's
	Differ    int           `json:"differ"`  // windows whose revenue in the changelog is not the recount's
	Extra     int64         `json:"extra_cents"`
	Judged    int           `json:"judged"` // orders the changelog's partitions say they judged
}

// Counted is the orders the instances counted in committed batches, together.
func (r Result) Counted() int {
	n := 0
	for _, i := range r.Instances {
		n += i.Stats.Orders
	}
	return n
}

// Exact reports whether the instances together counted what the recount did.
func (r Result) Exact() bool {
	return r.Differ == 0 && r.Extra == 0 && r.Judged == r.Written.Orders && r.Counted() == r.Written.Orders
}

// Instance returns the instance named id.
func (r Result) Instance(id string) (Instance, bool) {
	for _, i := range r.Instances {
		if i.ID == id {
			return i, true
		}
	}
	return Instance{}, false
}

// Owned is every partition instance id owned at the end of some phase.
func (r Result) Owned(id string) []int32 {
	var ps []int32
	for _, ph := range r.Phases {
		for _, p := range ph.Owners[id] {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	slices.Sort(ps)
	return ps
}

// ErrNotExact is what the program exits with when the changelog's windows
// are not the recount's.
var ErrNotExact = errors.New("the instances' windows differ from the batch recount")

// plan is who joins before which chunk.
var plan = []struct {
	id   string
	warm bool
}{{"a", false}, {"b", false}, {"c", true}}

// Run runs the demo: its own topics, group and local stores, all deleted
// at the end.
func Run(ctx context.Context, cfg brewkit.Config, c Config) (res Result, err error) {
	say := c.Progress
	if say == nil {
		say = func(string) {}
	}
	res.Plan = c.Plan
	cl, adm, err := brewkit.Connect(ctx, cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	in, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.stream.scale.", Partitions: Partitions})
	if err != nil {
		return res, err
	}
	res.In = in
	svc := analytics.Defaults
	svc.In, svc.Changelog, svc.Out, svc.Group = in, in+"-changelog", in+"-revenue", in+".analytics"
	svc.Idle = 0
	dir := c.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "brew-scale-"); err != nil {
			drop(ctx) //nolint:errcheck // the folder's error is the one to report
			return res, err
		}
	} else {
		dir = filepath.Join(dir, in)
	}
	g := &group{cfg: cfg, adm: adm, svc: svc, dir: dir, say: say, done: make(chan struct{})}
	defer g.cleanUp(ctx, drop)
	if err := analytics.Topics(ctx, adm, svc); err != nil {
		return res, err
	}

	orders := c.Plan.Draw(Partitions)
	res.Written = written(orders)
	say(fmt.Sprintf("%d orders of %d shops in %d chunks to %s (%d partitions); the instances keep their windows in %s",
		len(orders), c.Plan.Shops, Chunks, in, Partitions, svc.Changelog))

	for n := range plan {
		chunk := orders[n*len(orders)/Chunks : (n+1)*len(orders)/Chunks]
		ph, err := g.phase(ctx, cl, n, chunk)
		if err != nil {
			return res, err
		}
		res.Phases = append(res.Phases, ph)
	}
	g.stop()
	for _, r := range g.all {
		if r.err != nil {
			return res, r.err
		}
		res.Instances = append(res.Instances, *r.inst)
	}

	say("all instances stopped; recounting")
	if err := res.verify(ctx, cfg, adm, svc); err != nil {
		return res, err
	}
	return res, nil
}

// group is the instances running.
type group struct {
	cfg  brewkit.Config
	adm  *kadm.Client
	svc  analytics.Config
	dir  string // the instances' local stores, a folder each
	say  func(string)
	all  []*running
	done chan struct{} // closed when an instance fails
	once sync.Once
}

// phase is chunk n of the orders: plan[n] joins the group, the chunk is
// written, and the group counts it.
func (g *group) phase(ctx context.Context, cl *kgo.Client, n int, chunk []till.Order) (Phase, error) {
	who := plan[n]
	if n > 0 {
		// The new instance gets its partitions before the chunk is
		// written: otherwise the ones already running would count the
		// chunk before the group hands it any, and it would restore
		// nothing.
		g.start(ctx, who.id, n, who.warm)
		if _, err := g.waitFor(ctx, fmt.Sprintf("instance %s to get partitions", who.id), g.settled); err != nil {
			return Phase{}, err
		}
	}
	start := time.Now()
	if err := write(ctx, cl, g.svc.In, chunk); err != nil {
		return Phase{}, err
	}
	g.say(fmt.Sprintf("chunk %d: %d orders written", n+1, len(chunk)))
	if n == 0 {
		g.start(ctx, who.id, n, who.warm)
	}
	owners, err := g.waitFor(ctx, fmt.Sprintf("chunk %d to be counted (the group's lag 0)", n+1), g.caughtUp)
	if err != nil {
		return Phase{}, err
	}
	ph := Phase{Chunk: n + 1, Orders: len(chunk), Owners: owners, Took: time.Since(start)}
	g.say(fmt.Sprintf("chunk %d counted in %s: %s", n+1, ph.Took.Round(100*time.Millisecond), ownersText(owners)))
	return ph, nil
}

// write writes a chunk of orders, each to its partition.
func write(ctx context.Context, cl *kgo.Client, topic string, orders []till.Order) error {
	recs := make([]*kgo.Record, len(orders))
	for i, o := range orders {
		recs[i] = o.Record(topic)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("writing orders to %s: %w", topic, err)
	}
	return nil
}

// settled: the group is stable, every instance started is a member with
// partitions, and together they own every partition once.
func (g *group) settled(ctx context.Context) (map[string][]int32, bool, string, error) {
	ds, err := g.adm.DescribeGroups(ctx, g.svc.Group)
	if err == nil {
		err = ds.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil, false, "no member has joined the group yet", nil
	}
	if err != nil {
		return nil, false, "", fmt.Errorf("describing group %s: %w", g.svc.Group, err)
	}
	d := ds[g.svc.Group]
	owners := map[string][]int32{}
	seen := map[int32]int{}
	for _, m := range d.Members {
		id := m.MemberID
		if m.InstanceID != nil {
			id = strings.TrimPrefix(*m.InstanceID, g.svc.Group+".")
		}
		owners[id] = []int32{}
		if ca, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range ca.Topics {
				if t.Topic == g.svc.In {
					owners[id] = append(owners[id], t.Partitions...)
					for _, p := range t.Partitions {
						seen[p]++
					}
				}
			}
		}
		slices.Sort(owners[id])
	}
	saw := fmt.Sprintf("group %s: %s", strings.ToLower(d.State), ownersText(owners))
	if d.State != "Stable" || len(owners) != len(g.all) || len(seen) != Partitions {
		return owners, false, saw, nil
	}
	for _, r := range g.all {
		if len(owners[r.inst.ID]) == 0 {
			return owners, false, saw, nil
		}
	}
	for _, n := range seen {
		if n != 1 {
			return owners, false, saw, nil
		}
	}
	return owners, true, saw, nil
}

// caughtUp: settled, and the group's committed offsets are the orders'
// end offsets (the orders are written without transactions, so no
// control record sits past the last order).
func (g *group) caughtUp(ctx context.Context) (map[string][]int32, bool, string, error) {
	owners, ok, saw, err := g.settled(ctx)
	if err != nil || !ok {
		return owners, false, saw, err
	}
	ends, err := g.adm.ListEndOffsets(ctx, g.svc.In)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return owners, false, saw, fmt.Errorf("the end of %s: %w", g.svc.In, err)
	}
	committed, err := g.adm.FetchOffsets(ctx, g.svc.Group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return owners, false, saw, fmt.Errorf("the offsets of group %s: %w", g.svc.Group, err)
	}
	var lag int64
	for p := range int32(Partitions) {
		end, _ := ends.Lookup(g.svc.In, p)
		at := int64(0)
		if o, ok := committed.Lookup(g.svc.In, p); ok {
			at = o.At
		}
		lag += max(end.Offset-at, 0)
	}
	return owners, lag == 0, fmt.Sprintf("lag %d; %s", lag, ownersText(owners)), nil
}

// cleanUp stops the instances and deletes what the demo made: the group,
// its topics (drop deletes the orders') and the local stores. Leftovers
// are harmless: it reports no error.
func (g *group) cleanUp(ctx context.Context, drop func(context.Context) error) {
	g.stop()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// Static members stay in the group until their session times out;
	// remove them, so the group can be deleted now.
	var ids []string
	for _, r := range g.all {
		ids = append(ids, g.svc.Group+"."+r.inst.ID)
	}
	if len(ids) > 0 {
		g.adm.LeaveGroup(dctx, kadm.LeaveGroup(g.svc.Group).InstanceIDs(ids...).Reason("the scale demo ended")) //nolint:errcheck // best effort
	}
	g.adm.DeleteGroup(dctx, g.svc.Group)                 //nolint:errcheck // leftovers are harmless
	g.adm.DeleteTopics(dctx, g.svc.Changelog, g.svc.Out) //nolint:errcheck // and so are these
	drop(dctx)                                           //nolint:errcheck // and this
	os.RemoveAll(g.dir)                                  //nolint:errcheck // and the local stores
}
