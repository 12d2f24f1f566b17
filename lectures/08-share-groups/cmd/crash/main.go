// Command crash shows where the tickets a barista holds go when it dies: a
// consumer process takes tickets and holds them, then it is killed (SIGKILL)
// or frozen (SIGSTOP); a second barista gets them again with delivery count
// 2. `crash hold ...` is the holding barista.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/crash"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hold" {
		hold(os.Args[2:])
		return
	}
	c := crash.Defaults
	how := flag.String("how", "", "one way only: kill or freeze (default: both)")
	flag.DurationVar(&c.Lock, "lock", c.Lock, "the group's acquisition lock (share.record.lock.duration.ms)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crash [-how kill|freeze] [-lock 15s] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	hows := []crash.How{crash.Kill, crash.Freeze}
	if *how != "" {
		h := crash.How(*how)
		fc.Require(h == crash.Kill || h == crash.Freeze, "how", *how, "use kill or freeze")
		hows = []crash.How{h}
	}
	fc.Require(c.Lock >= 1e9, "lock", c.Lock, "must be at least 1s")
	fc.NoArgs()
	fc.ExitOnUsageError("crash")
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
	c.Holder = []string{self, "hold"}
	brewkit.Main("crash", func(ctx context.Context, cfg brewkit.Config) error {
		runs, err := crash.Demo(ctx, cfg, c, hows, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(runs)
		}
		crash.Print(os.Stdout, runs)
		return nil
	})
}

func hold(args []string) {
	fs := flag.NewFlagSet("hold", flag.ExitOnError)
	group := fs.String("group", "", "share group")
	topic := fs.String("topic", "", "topic")
	take := fs.Int("take", 5, "tickets to take and hold")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	if *group == "" || *topic == "" || *take < 1 {
		fmt.Fprintln(os.Stderr, "hold: needs -group, -topic and -take >= 1")
		os.Exit(2)
	}
	brewkit.Main("hold", func(ctx context.Context, cfg brewkit.Config) error {
		return crash.Hold(ctx, cfg, *group, *topic, *take)
	})
}
