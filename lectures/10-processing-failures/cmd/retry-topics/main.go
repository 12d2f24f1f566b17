// Command retry-topics is courier-service with non-blocking retries: a
// booking the partner refuses goes to brew.courier.retry.5s, then
// brew.courier.retry.1m, then the dead-letter topic brew.courier.dlt; a
// poison order goes there at once. The partner's faults are switched on for
// the run; the partner's booking log says what was booked, and how often.
// With -park, later events of an order wait behind its retried one.
// `retry-topics courier ...` is one courier process (retry.Child), which the
// tests kill with SIGKILL and start again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "courier" {
		retrytopics.Child("retry-topics", os.Args[2:])
		return
	}
	d := retrytopics.Defaults
	down := flag.Bool("down", false, "the partner never recovers (every call 503): every order through both retry topics into the DLT; sets -orders 20 -keys 0 -error-rate 1 -outage 0 -recover 0 unless given")
	flag.IntVar(&d.Orders, "orders", d.Orders, "events to write to brew.orders.v1")
	flag.IntVar(&d.Keys, "keys", d.Keys, "the events cycle over this many orders (several events per order); 0: one event per order")
	flag.IntVar(&d.Poison, "poison", d.Poison, "how many of the events are poison (not an order)")
	delays := flag.String("delays", "2s,5s", "the delays of brew.courier.retry.5s and brew.courier.retry.1m (the names say production's; a classroom waits less)")
	flag.BoolVar(&d.Park, "park", false, "keep per-order order: an order's later events follow its retried one through the retry topics")
	flag.Float64Var(&d.ErrorRate, "error-rate", d.ErrorRate, "share of booking calls the partner answers 503 until -recover, 0 to 1")
	flag.DurationVar(&d.OutageAt, "outage-at", d.OutageAt, "when the partner's outage starts, after the first order")
	flag.DurationVar(&d.Outage, "outage", d.Outage, "how long the partner answers every call 503 (0: no outage)")
	flag.DurationVar(&d.Recover, "recover", d.Recover, "when the error rate ends, after the first order (0: never)")
	flag.DurationVar(&d.CallTimeout, "call-timeout", d.CallTimeout, "one booking call's bound")
	flag.DurationVar(&d.Limit, "limit", d.Limit, "give up when not every event is booked or dead-lettered by then")
	addr := flag.String("partner", partner.DefaultAddr, "the partner's address; when none answers there, the program starts one of its own")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: retry-topics [-park] [-down] [-delays 2s,5s] [-error-rate 0.3] [-outage 2s] [-recover 4s] [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *down {
		for name, set := range map[string]func(){
			"orders": func() { d.Orders = retrytopics.Down.Orders }, "keys": func() { d.Keys = 0 },
			"error-rate": func() { d.ErrorRate = 1 }, "outage": func() { d.Outage = 0 }, "recover": func() { d.Recover = 0 },
		} {
			if !brewkit.Given(name) {
				set()
			}
		}
	}
	var fc brewkit.FlagCheck
	d.Delays = parseDelays(&fc, *delays)
	fc.Require(d.Orders > 0 && d.Orders <= 10000, "orders", d.Orders, "must be 1 to 10000")
	fc.Require(d.Keys >= 0, "keys", d.Keys, "must not be negative")
	fc.Require(d.Poison >= 0 && d.Poison < d.Orders, "poison", d.Poison, "must be 0 to fewer than -orders")
	fc.Require(d.ErrorRate >= 0 && d.ErrorRate <= 1, "error-rate", d.ErrorRate, "must be in [0, 1]")
	fc.Require(d.OutageAt >= 0, "outage-at", d.OutageAt, "must not be negative")
	fc.Require(d.Outage >= 0, "outage", d.Outage, "must not be negative")
	fc.Require(d.Recover >= 0, "recover", d.Recover, "must not be negative (0: never)")
	fc.Require(d.CallTimeout > 0, "call-timeout", d.CallTimeout, "must be > 0")
	fc.Require(d.Limit > 0, "limit", d.Limit, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("retry-topics")

	brewkit.Main("retry-topics", func(ctx context.Context, cfg brewkit.Config) error {
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
			nt.Note(fmt.Sprintf("(no partner answered on %s: this run started its own, whose log holds this run's calls only)", *addr))
		}
		res, err := retrytopics.Run(ctx, cfg, d, pc, say)
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

func parseDelays(fc *brewkit.FlagCheck, s string) []time.Duration {
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		fc.Require(false, "delays", s, "want two durations, the first retry topic's and the second's: 2s,5s")
		return retrytopics.DefaultDelays
	}
	var out []time.Duration
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d <= 0 {
			fc.Require(false, "delays", s, "want two durations > 0: 2s,5s")
			return retrytopics.DefaultDelays
		}
		out = append(out, d)
	}
	return out
}
