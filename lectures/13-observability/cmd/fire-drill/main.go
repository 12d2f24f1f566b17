// Command fire-drill (`make fire-drill`) makes every alert of the course
// fire for real on the stand that is up, then resolve: the kitchen stops,
// node 3 stops, nodes 2 and 3 stop, node 2 freezes. Before the faults a
// minute of healthy traffic in which no alert may fire. It prints the alert
// timeline as Prometheus saw it: seconds from each fault to pending and to
// firing, and from each fix to resolved.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/13-observability/firedrill"
	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

func main() {
	o := firedrill.Defaults
	steps := flag.String("steps", strings.Join(firedrill.StepNames, ","), "the steps to run, comma-separated, in this order: "+strings.Join(firedrill.StepNames, ", "))
	flag.StringVar(&o.Prometheus, "prometheus", o.Prometheus, "Prometheus' address")
	flag.IntVar(&o.Rate, "rate", o.Rate, "orders a second the till places")
	flag.DurationVar(&o.Healthy, "healthy", o.Healthy, "healthy traffic before the first fault, in which no alert may fire (BrewGroupLagGrowing needs a minute of history)")
	flag.DurationVar(&o.FireIn, "fire-in", o.FireIn, "how long each alert may take to fire after its fault")
	flag.DurationVar(&o.ResolveIn, "resolve-in", o.ResolveIn, "how long each alert may take to resolve after its fix")
	save := flag.String("save", "", "also write the report as JSON to this file (the lag picture is drawn from it)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: fire-drill [flags]

Stops, freezes and starts nodes of the stand that is up in this checkout
(make up) and stops the drill's own kitchen, while Prometheus (make
services-up S=prometheus) evaluates the course's alert rules. Serves the lag
exporter on %s and the kitchen's metrics on %s meanwhile.
Takes about 5 minutes.

`, lag.MetricsAddr, kitchen.MetricsAddr)
		flag.PrintDefaults()
	}
	flag.Parse()
	o.Steps = strings.Split(*steps, ",")
	var fc brewkit.FlagCheck
	for _, s := range o.Steps {
		fc.Require(contains(firedrill.StepNames, s), "steps", *steps, "names steps of "+strings.Join(firedrill.StepNames, ", "))
	}
	fc.Require(strings.HasPrefix(o.Prometheus, "http://") || strings.HasPrefix(o.Prometheus, "https://"), "prometheus", o.Prometheus, "must be an http:// or https:// URL")
	fc.Require(o.Rate >= 1 && o.Rate <= 500, "rate", o.Rate, "must be 1 to 500 orders a second")
	fc.Require(o.Healthy >= 0 && o.Healthy <= 10*time.Minute, "healthy", o.Healthy, "must be 0 to 10m")
	fc.Require(o.FireIn >= 10*time.Second && o.FireIn <= 10*time.Minute, "fire-in", o.FireIn, "must be 10s to 10m")
	fc.Require(o.ResolveIn >= 10*time.Second && o.ResolveIn <= 10*time.Minute, "resolve-in", o.ResolveIn, "must be 10s to 10m")
	fc.NoArgs()
	fc.ExitOnUsageError("fire-drill")

	brewkit.Main("fire-drill", func(ctx context.Context, cfg brewkit.Config) error {
		err := run(ctx, cfg, o, *save)
		return brewkit.LeftBehind(err, "nodes the drill stopped or froze may stay so: `make restore` brings them back")
	})
}

func run(ctx context.Context, cfg brewkit.Config, o firedrill.Options, save string) error {
	s, err := stand.FindRunning("the fire drill stops, freezes and starts nodes")
	if err != nil {
		return err
	}
	o.Progress = func(line string) { fmt.Fprintln(os.Stderr, "fire-drill:", line) }
	rep, err := firedrill.Run(ctx, cfg, s, firedrill.Serve, o)
	if err != nil {
		return err
	}
	if save != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(save, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("saving the report: %w", err)
		}
	}
	fmt.Println()
	firedrill.Print(os.Stdout, rep)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
