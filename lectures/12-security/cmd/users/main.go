// Command users is lecture 12's SCRAM demo (`make users`): the operator
// creates the courier partner's and the analytics contractor's SCRAM-SHA-512
// users through the admin API (an upsert: idempotent) and lists every SCRAM
// user; the partner logs in on the SASL_SSL listeners, then with a wrong
// password, without SASL and without TLS, each failure in one line; its
// password is rotated, and the old one, the new one and a connection opened
// before are tried. -delete removes the lecture's users (`make users-delete`).
package main

import (
	"context"
	"flag"
	"os"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/users"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := users.Defaults
	flag.StringVar(&o.Partner, "partner", o.Partner, "the courier partner's SCRAM user")
	flag.StringVar(&o.Analytics, "analytics", o.Analytics, "the analytics contractor's SCRAM user")
	iterations := flag.Int("iterations", int(o.Iterations), "iterations of the salted hash the cluster stores (4096 to 16384)")
	del := flag.Bool("delete", false, "delete the two users instead (the reset path)")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Name("partner", o.Partner)
	fc.Name("analytics", o.Analytics)
	fc.Require(o.Analytics != o.Partner, "analytics", o.Analytics, "must differ from -partner")
	fc.Require(*iterations >= 4096 && *iterations <= 16384, "iterations", *iterations, "must be 4096 to 16384, the range Kafka accepts")
	fc.NoArgs()
	fc.ExitOnUsageError("users")
	o.Iterations = int32(*iterations)

	brewkit.Main("users", func(ctx context.Context, cfg brewkit.Config) error {
		c, err := secure.Find(ctx, cfg)
		if err != nil {
			return err
		}
		if *del {
			ds, err := users.Delete(ctx, c, o.Partner, o.Analytics)
			if err != nil {
				return err
			}
			users.PrintDeleted(os.Stdout, ds)
			return nil
		}
		r, err := users.Run(ctx, c, o)
		if err != nil {
			return err
		}
		users.Print(os.Stdout, o, r)
		return nil
	})
}
