// Command quotas (`make quotas`) puts a producer byte-rate quota on a noisy
// client: users noisy and quiet produce flat out on the secured listeners
// at the same time, first with no quota, then with producer_byte_rate on
// user=noisy, and it prints each one's throughput per broker and the throttle
// time the brokers reported. -delete removes the quota, the ACL and the users.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/12-security/quota"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := quota.Defaults
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, `usage: quotas [flags]

Users noisy and quiet (SCRAM-SHA-512, created if missing) produce as fast as
they can at once on the SECURE listeners (127.0.0.1:19192-19194), first with
no quota, then with producer_byte_rate on user=noisy, set by the operator on
%s. Prints each one's bytes a second per broker and the throttle time the
brokers reported. The quota and the users stay until -delete.

`, brewkit.EnvBootstrap)
		flag.PrintDefaults()
	}
	flag.StringVar(&o.Noisy, "noisy", o.Noisy, "the user that gets the quota")
	flag.StringVar(&o.Quiet, "quiet", o.Quiet, "the user without one")
	flag.Int64Var(&o.Rate, "rate", o.Rate, "producer_byte_rate for -noisy: bytes a second on each broker")
	flag.DurationVar(&o.Free, "without", o.Free, "how long both produce before the quota")
	flag.DurationVar(&o.Limited, "with", o.Limited, "how long both produce with it (Kafka averages a quota over 10 s or more)")
	flag.IntVar(&o.RecordBytes, "record-bytes", o.RecordBytes, "each record's value")
	del := flag.Bool("delete", false, "remove the quota, the ACL and the SCRAM passwords of -noisy and -quiet, and stop")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Name("noisy", o.Noisy)
	fc.Name("quiet", o.Quiet)
	fc.Require(o.Quiet != o.Noisy, "quiet", o.Quiet, "must differ from -noisy")
	fc.Require(o.Rate >= 1024 && o.Rate <= 1<<30, "rate", o.Rate, "must be 1024 to 1073741824 bytes a second")
	fc.Require(o.Free >= 500*time.Millisecond && o.Free <= time.Minute, "without", o.Free, "must be 500ms to 1m")
	fc.Require(o.Limited >= time.Second && o.Limited <= 2*time.Minute, "with", o.Limited, "must be 1s to 2m")
	fc.Require(o.RecordBytes >= 1 && o.RecordBytes <= 60_000, "record-bytes", o.RecordBytes, "must be 1 to 60000 (a batch is 64 KiB)")
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
			users := []string{o.Noisy, o.Quiet}
			d, err := quota.Delete(ctx, adm, users...)
			if err != nil {
				return err
			}
			quota.PrintDeleted(os.Stdout, d, users)
			return nil
		}
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, "quotas:", s) }
		r, err := quota.Run(ctx, c, o)
		if err != nil {
			return brewkit.LeftBehind(err, fmt.Sprintf("a quota on %s may stay: `make quotas-delete` removes it", o.Noisy))
		}
		quota.Print(os.Stdout, r)
		return nil
	})
}
