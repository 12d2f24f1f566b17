// Package drill kills the analytics service with SIGKILL again and again
// and holds what it counted to the batch recount. The orders go to topics
// of the drill's own; the service runs as a process of its own and kills
// itself at points drawn from a seeded random source (how many orders in,
// which stage of a batch), and every other restart finds its local store
// deleted, so it rebuilds from the changelog. A last run finishes the
// orders. Then the changelog's windows are compared with the recount: equal
// with exactly-once, not without.
package exactlyonce

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/recount"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Config is one drill.
type Config struct {
	Service []string // the command that runs the service; Run adds its flags
	Plan    till.Plan
	Crashes int
	Seed    uint64
	EOS     bool
	Dir     string // where the service's local store goes (a folder of the drill's own inside)
}

// Defaults: the till's orders, ten crashes, exactly once.
var Defaults = Config{Plan: till.Defaults, Crashes: 10, Seed: 14, EOS: true, Dir: ".state"}

// Point is one crash.
type Point struct {
	After int             `json:"after_orders"`
	At    analytics.Stage `json:"stage"`
	Wipe  bool            `json:"wipe"` // the restart after it finds no local store
	Died  bool            `json:"died"` // false: the orders ran out first
}

// Plan draws the crash points: every stage in turn in a seeded random
// order, each 20-300 orders into a run; every other restart wipes the
// local store.
func Plan(seed uint64, crashes int) []Point {
	rng := rand.New(rand.NewPCG(seed, 14))
	var pts []Point
	for len(pts) < crashes {
		stages := append([]analytics.Stage(nil), analytics.Stages...)
		rng.Shuffle(len(stages), func(i, j int) { stages[i], stages[j] = stages[j], stages[i] })
		for _, s := range stages {
			if len(pts) < crashes {
				pts = append(pts, Point{After: 20 + rng.IntN(281), At: s, Wipe: len(pts)%2 == 1})
			}
		}
	}
	return pts
}

// Result is the drill's outcome.
type Result struct {
	Mode    string        `json:"mode"`
	In      string        `json:"in"`
	Seed    uint64        `json:"seed"`
	Points  []Point       `json:"points"`
	Written till.Written  `json:"written"`
	Recount window.Counts `json:"recount"`
	Windows int           `json:"windows"` // the recount's
	Differ  int           `json:"differ"`  // windows whose revenue in the changelog is not the recount's
	Extra   int64         `json:"extra_cents"`
	Counted int           `json:"counted"` // orders the changelog's partitions say they judged
}

// Exact reports whether the service counted what the recount did.
func (r Result) Exact() bool {
	return r.Differ == 0 && r.Extra == 0 && r.Counted == r.Written.Orders
}

// Run runs the drill.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (res Result, err error) {
	res = Result{Mode: "exactly-once", Seed: c.Seed}
	if !c.EOS {
		res.Mode = "no-eos"
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	in, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.stream.drill.", Partitions: 6})
	if err != nil {
		return res, err
	}
	res.In = in
	svc := analytics.Defaults
	svc.In, svc.Changelog, svc.Out, svc.Group, svc.ID = in, in+"-changelog", in+"-revenue", in+".analytics", "a"
	svc.Dir = c.Dir + "/" + in
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		drop(dctx)                                     //nolint:errcheck // leftovers are harmless
		adm.DeleteTopics(dctx, svc.Changelog, svc.Out) //nolint:errcheck // and so are these
		analytics.DeleteGroup(dctx, adm, svc, svc.ID)  //nolint:errcheck // and the group
		os.RemoveAll(svc.Dir)                          //nolint:errcheck // and the local store
	}()
	if err := analytics.Topics(ctx, adm, svc); err != nil {
		return res, err
	}
	if res.Written, err = till.Write(ctx, cfg, in, 6, c.Plan); err != nil {
		return res, err
	}
	say(fmt.Sprintf("%s: %d orders in %s (%d too late on purpose); the service keeps its windows in %s", res.Mode, res.Written.Orders, in, res.Written.Meant.TooLate, svc.Changelog))

	args := []string{"-in", svc.In, "-changelog", svc.Changelog, "-out", svc.Out, "-group", svc.Group, "-id", svc.ID, "-dir", svc.Dir, "-idle", "2s"}
	if !c.EOS {
		args = append(args, "-no-eos")
	}
	for i, p := range Plan(c.Seed, c.Crashes) {
		died, err := brewkit.RunChild(ctx, cfg, "the analytics service", c.Service, say, append(args, "-crash-after", strconv.Itoa(p.After), "-crash-at", string(p.At))...)
		if err != nil {
			return res, err
		}
		p.Died = died
		res.Points = append(res.Points, p)
		what := "killed (SIGKILL)"
		if !died {
			what = "ran out of orders first"
		}
		if p.Wipe {
			if err := store.Remove(svc.Dir); err != nil {
				return res, err
			}
			what += "; local store deleted"
		}
		say(fmt.Sprintf("%s: crash %d/%d: %d orders in, at %q: %s", res.Mode, i+1, c.Crashes, p.After, p.At, what))
	}
	if _, err := brewkit.RunChild(ctx, cfg, "the analytics service", c.Service, say, args...); err != nil {
		return res, err
	}
	say(fmt.Sprintf("%s: a last run finished the orders; recounting", res.Mode))

	want, err := recount.Run(ctx, cfg, adm, in, svc.Window)
	if err != nil {
		return res, err
	}
	got, parts, err := store.Materialized(ctx, cfg, adm, svc.Changelog)
	if err != nil {
		return res, err
	}
	res.Recount, res.Windows = want.Counts, len(want.Totals)
	differ, extra := window.Diff(want.Totals, got)
	res.Differ, res.Extra = len(differ), extra
	for _, p := range parts {
		res.Counted += p.Counts.Records
	}
	return res, nil
}

// Print writes the crash points and the verdict.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%s, seed %d: %d crashes\n", r.Mode, r.Seed, len(r.Points))
	t := brewkit.NewTable(w, "CRASH", "AFTER ORDERS", "STAGE", "OUTCOME", "RESTART")
	for i, p := range r.Points {
		outcome, restart := "SIGKILL", "local store kept"
		if !p.Died {
			outcome = "orders ran out first"
		}
		if p.Wipe {
			restart = "local store deleted"
		}
		t.Row(i+1, p.After, p.At, outcome, restart)
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintf(w, "orders %d, judged %d (the changelog's count); recount: %d windows, %d too late\n", r.Written.Orders, r.Counted, r.Windows, r.Recount.TooLate)
	verdict := "EXACT: every window equals the recount"
	if !r.Exact() {
		verdict = fmt.Sprintf("WRONG: %d windows differ from the recount, revenue over by %d cents", r.Differ, r.Extra)
	}
	fmt.Fprintln(w, verdict)
}
