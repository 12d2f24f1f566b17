// Command watch-isr shows a topic's replication live: per partition the
// leader, its epoch, the replicas, the in-sync replicas and the offline ones,
// with the time of each change. Piped, it prints one timestamped line per change.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/04-replication-isr/isr"
)

func main() {
	topic := flag.String("topic", brewkit.Orders.Name, "topic to watch")
	create := flag.Bool("create", true, "create the Brew topics first if they are missing")
	interval := flag.Duration("interval", time.Second, "time between looks")
	once := flag.Bool("once", false, "print one look and exit")
	asJSON := flag.Bool("json", false, "print each look as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: watch-isr [-topic T] [-once] [-json] [-interval 1s]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", *topic)
	fc.Require(*interval > 0, "interval", *interval, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("watch-isr")
	brewkit.Main("watch-isr", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, *topic, *create, *once, *asJSON, *interval)
	})
}

func run(ctx context.Context, cfg brewkit.Config, topic string, create, once, asJSON bool, interval time.Duration) error {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	if create {
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Catalog...); err != nil {
			return err
		}
	}
	simulated, err := brewkit.IsSimulated(ctx, cl)
	if err != nil {
		return err
	}
	tty := brewkit.IsTerminal(os.Stdout)
	live := brewkit.NewLive(os.Stdout)
	var w isr.Watch
	first := true
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		t, err := isr.Snapshot(lctx, adm, topic)
		cancel()
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && once:
			return err
		case err != nil:
			fmt.Fprintf(os.Stderr, "%s no answer: %v\n", now.Format("15:04:05"), err)
		case asJSON:
			json.NewEncoder(os.Stdout).Encode(t) //nolint:errcheck // stdout
		default:
			changes := w.Observe(t, now)
			if tty && !once {
				frame := w.Frame(t, now, true)
				if simulated {
					frame += "\n(" + brewkit.SimulatedNote + ")\n"
				}
				live.Frame(frame)
				break
			}
			if first {
				t.Print(os.Stdout, nil)
				if simulated {
					fmt.Printf("(%s)\n", brewkit.SimulatedNote)
				}
			}
			for _, c := range changes {
				if c.Field != "epoch" {
					fmt.Printf("%s %s\n", now.Format("15:04:05.000"), c)
				}
			}
			if len(changes) > 0 {
				fmt.Printf("%s under-replicated %d of %d, under min ISR %d of %d\n", now.Format("15:04:05.000"),
					t.UnderReplicated(), len(t.Partitions), t.UnderMinISR(), len(t.Partitions))
			}
		}
		first = false
		if once {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
