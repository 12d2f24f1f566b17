// Command dlt shows courier-service's dead-letter topic, brew.courier.dlt:
// per error how many dead letters, the oldest and the newest, and the oldest
// of each with its headers. With -replay it writes the selected dead letters
// back to brew.orders.v1 after a fix, once: the replay group remembers what
// it replayed, and the courier books with the order id as the idempotency key.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/dlt"
	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	run := flag.String("run", "", "whose dead letters: a run's name (retry-123456), all, or empty for the newest dead letter's run")
	replay := flag.Bool("replay", false, "replay the selected dead letters to brew.orders.v1, and book them")
	kind := flag.String("kind", dlt.KindRetriable, "with -replay: the error kind to replay: retriable, poison or all")
	errText := flag.String("error", "", "with -replay: only dead letters whose error contains this")
	again := flag.Bool("again", false, "with -replay: replay also what the replay group replayed before (the idempotency key still books each order once)")
	book := flag.Bool("book", true, "with -replay: run a courier on the replayed records until each is booked (false: only write them, for a courier already running)")
	limit := flag.Duration("limit", 2*time.Minute, "with -replay: give up when the replayed records are not all booked by then")
	addr := flag.String("partner", partner.DefaultAddr, "with -replay: the partner's address; when none answers there, the program starts one of its own")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: dlt [-run NAME|all] [-replay [-kind retriable|poison|all] [-error TEXT] [-again]] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*kind == dlt.KindRetriable || *kind == dlt.KindPoison || *kind == dlt.KindAll, "kind", *kind, "want retriable, poison or all")
	fc.Require(*limit > 0, "limit", *limit, "must be > 0")
	for _, f := range []string{"kind", "error", "again", "book", "limit", "partner"} {
		if brewkit.Given(f) && !*replay {
			fc.Require(false, f, flag.Lookup(f).Value.String(), "only with -replay")
		}
	}
	if brewkit.Given("run") {
		fc.Name("run", *run)
	}
	fc.NoArgs()
	fc.ExitOnUsageError("dlt")

	brewkit.Main("dlt", func(ctx context.Context, cfg brewkit.Config) error {
		topics := retrytopics.CourierTopics(retrytopics.DefaultDelays)
		if !*replay {
			in, err := dlt.Inspect(ctx, cfg, topics.DLT, *run)
			if err != nil {
				return err
			}
			if *asJSON {
				return json.NewEncoder(os.Stdout).Encode(in)
			}
			in.Print(os.Stdout)
			return nil
		}
		pc, own, err := partner.Ensure(ctx, *addr)
		if err != nil {
			return err
		}
		defer own.Close()
		// Progress comes once records are read (Kafka answered); piped, the
		// note waits for success: a failure is one line.
		say := func(s string) { fmt.Fprintln(os.Stderr, s) }
		nt := notes.Stderr()
		if own != nil {
			nt.Note(fmt.Sprintf("(no partner answered on %s: this run started its own, whose log knows nothing of earlier runs' bookings; `make partner` keeps one log across the commands)", *addr))
		}
		res, err := dlt.RunReplay(ctx, cfg, dlt.Replay{Topics: topics, Run: *run, Kind: *kind, Error: *errText,
			Again: *again, Book: *book, Limit: *limit}, pc, say)
		if err != nil {
			return err
		}
		nt.Done()
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		return nil
	})
}
