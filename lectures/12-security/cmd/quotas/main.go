// Command quotas (`make quotas`) puts a producer byte-rate quota on a noisy
// client: users noisy and quiet produce flat out on the secured listeners
// at the same time, first with producer_byte_rate on user=noisy, then with
// the quota removed, and it prints each one's throughput per broker and the
// throttle time the brokers reported. -delete removes the users, their ACL
// and a quota an interrupted run left.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/12-security/quotas"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := quotas.Defaults
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, `usage: quotas [flags]

Users noisy and quiet (SCRAM-SHA-512, created if missing) produce as fast as
they can at once on the SECURE listeners (127.0.0.1:19192-19194), first with
producer_byte_rate on user=noisy, set by the operator on %s, then with
it removed. Prints each one's bytes a second per broker and the throttle time
the brokers reported. The users stay until -delete.

`, brewkit.EnvBootstrap)
		flag.PrintDefaults()
	}
	flag.StringVar(&o.Noisy, "noisy", o.Noisy, "the user that gets the quota")
	flag.StringVar(&o.Quiet, "quiet", o.Quiet, "the user without one")
	flag.Int64Var(&o.Rate, "rate", o.Rate, "producer_byte_rate for -noisy: bytes a second on each broker")
	flag.DurationVar(&o.Limited, "with", o.Limited, "how long both produce with the quota (Kafka averages it over 10 s to 11 s)")
	flag.DurationVar(&o.Free, "without", o.Free, "how long both produce once it is removed")
	flag.IntVar(&o.RecordBytes, "record-bytes", o.RecordBytes, "each record's value")
	del := flag.Bool("delete", false, "delete -noisy and -quiet (their SCRAM passwords, their ACL, a quota left on them), and stop")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Name("noisy", o.Noisy)
	fc.Name("quiet", o.Quiet)
	fc.Require(o.Quiet != o.Noisy, "quiet", o.Quiet, "must differ from -noisy")
	fc.Require(o.Rate >= 1024 && o.Rate <= 1<<30, "rate", o.Rate, "must be 1024 to 1073741824 bytes a second")
	fc.Require(o.Free >= 500*time.Millisecond && o.Free <= time.Minute, "without", o.Free, "must be 500ms to 1m")
	fc.Require(o.Limited >= time.Second && o.Limited <= 2*time.Minute, "with", o.Limited, "must be 1s to 2m")
	fc.Require(o.RecordBytes >= 1 && o.RecordBytes <= 30_000, "record-bytes", o.RecordBytes, "must be 1 to 30000 (a batch is 32 KiB)")
	fc.NoArgs()
	fc.ExitOnUsageError("quotas")

	brewkit.Main("quotas", func(ctx context.Context, cfg brewkit.Config) error {
		c, err := secure.Find(ctx, cfg)
		if err != nil {
			return err
		}
		if *del {
			_, adm, err := brewkit.Connect(ctx, c.Admin)
			if err != nil {
				return err
			}
			defer adm.Close()
			d, err := quotas.Delete(ctx, adm, o.Noisy, o.Quiet)
			if err != nil {
				return err
			}
			quotas.PrintDeleted(os.Stdout, d)
			return nil
		}
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, "quotas:", s) }
		r, err := quotas.Run(ctx, c, o)
		if err != nil {
			return brewkit.LeftBehind(err, fmt.Sprintf("the quota on %s may stay: `make quotas-delete` removes it", o.Noisy))
		}
		quotas.Print(os.Stdout, r)
		return nil
	})
}
