package outbox

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Subcommand runs os.Args[1] when it is one of the drill's processes
// (orders, relay) and reports whether it was: program's main calls it
// first. The drill starts them as Options.Command + the subcommand.
func Subcommand(program string) bool {
	if len(os.Args) < 2 {
		return false
	}
	switch os.Args[1] {
	case "orders":
		orderService(program, os.Args[2:])
	case "relay":
		relayMain(program, os.Args[2:])
	default:
		return false
	}
	return true
}

// orderService is `PROGRAM orders FLAGS`: one order-service process of the drill.
func orderService(program string, args []string) {
	fs := flag.NewFlagSet(program+" orders", flag.ExitOnError)
	var w Writer
	fs.StringVar(&w.Schema, "schema", Defaults.Schema, "order-service's schema")
	fs.StringVar(&w.Run, "run", "", "the run the orders belong to")
	fs.Uint64Var(&w.Seed, "seed", Defaults.Seed, "seed of the orders")
	fs.IntVar(&w.From, "from", 0, "the first order")
	fs.IntVar(&w.To, "to", Defaults.Orders, "the order after the last")
	fs.IntVar(&w.KillAt, "kill-at", -1, "get SIGKILL inside this order's transaction (-1: never)")
	stage := fs.String("kill-stage", string(BeforeCommit), "where: order (after the order's INSERT) or outbox (before COMMIT)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	w.KillStage = Stage(*stage)
	var fc brewkit.FlagCheck
	fc.Require(w.KillStage == AfterOrder || w.KillStage == BeforeCommit, "kill-stage", *stage, "must be order or outbox")
	fc.Require(fs.NArg() == 0, "run", w.Run, "takes no arguments after the flags")
	fc.ExitOnUsageError(program)
	brewkit.Main(program+" orders", func(ctx context.Context, _ brewkit.Config) error {
		return WriteOrders(ctx, w)
	})
}

// relayMain is `PROGRAM relay FLAGS`: one relay, the drill's or on its own.
func relayMain(program string, args []string) {
	fs := flag.NewFlagSet(program+" relay", flag.ExitOnError)
	r := Relay{Report: os.Stdout}
	fs.StringVar(&r.Schema, "schema", Defaults.Schema, "order-service's schema")
	fs.StringVar(&r.Topic, "topic", Defaults.Topic, "the topic to publish to")
	fs.IntVar(&r.Batch, "batch", Defaults.Batch, "outbox rows per transaction")
	fs.DurationVar(&r.Poll, "poll", 100*time.Millisecond, "the wait after a poll that found nothing")
	fs.BoolVar(&r.UntilEmpty, "until-empty", false, "stop at the first poll that finds nothing")
	kills := fs.String("kills", "", "the drill's kill plan: stage:outbox-id,...")
	fs.StringVar(&r.Fired, "fired", "", "the drill's folder of fired kills")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	fc.Topic("topic", r.Topic)
	fc.Name("schema", r.Schema)
	fc.Require(r.Batch >= 1 && r.Batch <= 10_000, "batch", r.Batch, "must be 1 to 10000")
	fc.Require(r.Poll > 0, "poll", r.Poll, "must be positive")
	plan, err := ParseKills(*kills)
	fc.Require(err == nil, "kills", *kills, fmt.Sprint(err))
	fc.Require(len(plan) == 0 || r.Fired != "", "fired", r.Fired, "a kill plan needs the folder of fired kills")
	fc.Require(fs.NArg() == 0, "topic", r.Topic, "takes no arguments after the flags")
	fc.ExitOnUsageError(program) // `outbox -h` names the relay's flags too
	r.Kills = plan
	if !r.UntilEmpty {
		r.Report = nil // on its own: the summary line only
	}
	brewkit.Main(program+" relay", func(ctx context.Context, cfg brewkit.Config) error {
		st, err := RunRelay(ctx, cfg, r)
		if !r.UntilEmpty {
			fmt.Fprintf(os.Stderr, "%s relay: %d events in %d batches\n", program, st.Events, st.Batches)
		}
		return err
	})
}
