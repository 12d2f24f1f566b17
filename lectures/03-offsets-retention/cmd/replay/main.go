// Command replay moves a consumer group's committed offsets, as Kafka's
// kafka-consumer-groups --reset-offsets does: it prints the plan, and with
// -execute commits it. It refuses while the group has active members.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/replay"
)

func main() {
	group := flag.String("group", "brew.analytics", "consumer group to move")
	topic := flag.String("topic", brewkit.Orders.Name, "topic whose offsets move")
	var spec replay.Spec
	flag.BoolVar(&spec.Earliest, "to-earliest", false, "to the log start: re-read everything retained")
	flag.BoolVar(&spec.Latest, "to-latest", false, "to the log end: skip everything written so far")
	at := flag.String("to-datetime", "", "to the first records at or after this time (RFC 3339, e.g. 2026-11-27T09:00:00Z) or a duration ago (e.g. 10m)")
	flag.Int64Var(&spec.Shift, "shift-by", 0, "by N records (negative re-reads)")
	execute := flag.Bool("execute", false, "commit the new offsets (without it: only the plan)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: replay [-group G] [-topic T] (-to-earliest | -to-latest | -to-datetime T | -shift-by N) [-execute]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Name("group", *group)
	fc.Topic("topic", *topic)
	if *at != "" {
		t, err := parseTime(*at, time.Now())
		fc.Require(err == nil, "to-datetime", *at, fmt.Sprint(err))
		spec.At = t
	}
	if err := spec.Validate(); err != nil {
		fc.Problem("%v", err)
	}
	fc.NoArgs()
	fc.ExitOnUsageError("replay")
	brewkit.Main("replay", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, *group, *topic, spec, *execute)
	})
}

// parseTime reads -to-datetime: a time (RFC 3339) or a duration before now,
// either in the past, since the group moves back to re-read.
func parseTime(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, errors.New("a duration ago must be > 0 (10m: ten minutes ago)")
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("use RFC 3339 (2026-11-27T09:00:00Z) or a duration ago (10m)")
	}
	if t.After(now) {
		return time.Time{}, fmt.Errorf("is in the future (now is %s): name a time in the past, or use -to-latest", now.UTC().Format(time.RFC3339))
	}
	return t, nil
}

func run(ctx context.Context, cfg brewkit.Config, group, topic string, spec replay.Spec, execute bool) error {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	plan, err := replay.Plan(ctx, adm, group, topic, spec)
	if noTopic := (*replay.NoTopicError)(nil); errors.As(err, &noTopic) {
		return fmt.Errorf("%w: pass one of them with -topic (`make load-and-watch TOPIC=%s` creates this one and writes orders to it)", err, topic)
	}
	if errors.Is(err, replay.ErrActive) {
		return fmt.Errorf("%w (Kafka's own tool refuses an active group too)", err)
	}
	if err != nil {
		return err
	}
	fmt.Printf("moving group %s on %s to %s\n\n", group, topic, spec)
	replay.Print(os.Stdout, group, topic, plan)
	if !execute {
		fmt.Println("\ndry run: nothing changed; add -execute to commit these offsets")
		return nil
	}
	if err := replay.Apply(ctx, adm, group, topic, plan); err != nil {
		return brewkit.LeftBehind(err, "the group's offsets may be partly moved: run the same command again to finish")
	}
	fmt.Println("\ncommitted: the group's consumers start from NEW when they next join")
	return nil
}
