// Package drill crashes the kitchen service again and again and checks what
// it wrote. Orders go to a fresh topic; the kitchen runs as a process of its
// own and kills itself with SIGKILL at points drawn from a seeded random
// source (how many orders in, which stage of the batch); after each crash it
// is started again, and a last run finishes the orders. Then every order must
// have been cooked exactly once.
package crashdrill

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

// Config is one drill.
type Config struct {
	Kitchen []string // the command that runs the kitchen; Run adds its flags and hands its stdout lines to say
	Orders  int
	Crashes int
	Seed    uint64
	NoEOS   bool
}

// Defaults: 300 orders, 10 crashes.
var Defaults = Config{Orders: 300, Crashes: 10, Seed: 7}

// Point is one crash.
type Point struct {
	After int           `json:"after_orders"`
	At    kitchen.Stage `json:"stage"`
	Died  bool          `json:"died"` // false: the orders ran out first
}

// Result is the drill's outcome.
type Result struct {
	Mode   string         `json:"mode"`
	In     string         `json:"in"`
	Out    string         `json:"out"`
	Seed   uint64         `json:"seed"`
	Points []Point        `json:"points"`
	Report kitchen.Report `json:"report"`
}

// Plan draws the crash points: every stage in turn, in a seeded random
// order, each after a random number of orders (1-15).
func Plan(seed uint64, crashes int) []Point {
	rng := rand.New(rand.NewPCG(seed, 7))
	var pts []Point
	for len(pts) < crashes {
		stages := slices.Clone(kitchen.Stages)
		rng.Shuffle(len(stages), func(i, j int) { stages[i], stages[j] = stages[j], stages[i] })
		for _, s := range stages {
			if len(pts) < crashes {
				pts = append(pts, Point{After: 1 + rng.IntN(15), At: s})
			}
		}
	}
	return pts
}

// Run runs the drill.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Mode: "exactly-once", Seed: c.Seed}
	if c.NoEOS {
		res.Mode = "no-eos"
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	var dropIn, dropOut func(context.Context) error
	if res.In, dropIn, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.drill.orders.", Partitions: 3}); err != nil {
		return res, err
	}
	defer dropIn(ctx) //nolint:errcheck // leftovers are harmless
	if res.Out, dropOut, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.drill.kitchen.", Partitions: 3}); err != nil {
		return res, err
	}
	defer func() {
		dropOut(ctx) //nolint:errcheck // leftovers are harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, res.In) //nolint:errcheck // and so is the group
	}()
	rng := rand.New(rand.NewPCG(c.Seed, 1))
	recs := make([]*kgo.Record, c.Orders)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(res.In)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return res, fmt.Errorf("writing the orders: %w", err)
	}
	say(fmt.Sprintf("%s: %d orders in %s; kitchen writes to %s", res.Mode, c.Orders, res.In, res.Out))

	args := []string{"-in", res.In, "-out", res.Out, "-group", res.In, "-id", "kitchen-" + strconv.Itoa(rand.IntN(1e6)), "-idle", "2s"}
	if c.NoEOS {
		args = append(args, "-no-eos")
	}
	for i, p := range Plan(c.Seed, c.Crashes) {
		died, err := brewkit.RunChild(ctx, cfg, "the kitchen", c.Kitchen, say, append(slices.Clone(args), "-crash-after", strconv.Itoa(p.After), "-crash-at", string(p.At))...)
		if err != nil {
			return res, err
		}
		p.Died = died
		res.Points = append(res.Points, p)
		what := "killed (SIGKILL)"
		if !died {
			what = "ran out of orders first"
		}
		say(fmt.Sprintf("%s: crash %d/%d: after %d orders at %q: %s", res.Mode, i+1, c.Crashes, p.After, p.At, what))
	}
	if _, err := brewkit.RunChild(ctx, cfg, "the kitchen", c.Kitchen, say, args...); err != nil {
		return res, err
	}
	say(fmt.Sprintf("%s: a last run finished the orders; verifying", res.Mode))
	res.Report, err = kitchen.Verify(ctx, cfg, res.In, res.Out)
	return res, err
}

// Print writes the crash points and the verdict.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%s, seed %d: %d crashes\n", r.Mode, r.Seed, len(r.Points))
	t := brewkit.NewTable(w, "CRASH", "AFTER ORDERS", "STAGE", "OUTCOME")
	for i, p := range r.Points {
		outcome := "SIGKILL"
		if !p.Died {
			outcome = "orders ran out first"
		}
		t.Row(i+1, p.After, p.At, outcome)
	}
	t.Flush()
	fmt.Fprintln(w)
	r.Report.Print(w)
}
