// Command tls connects to node 1's secured listeners the ways a client gets
// TLS right and wrong (`make tls`): on SECURE (SASL_SSL) with the course CA,
// with no CA, with the wrong host name and with no check at all, then with a
// relay in the middle; on MTLS (a client certificate required, its CN the
// principal) with the partner's certificate, brew's, none, one from another
// CA and an expired one. It prints for each how far it got, OK or the exact
// error, and what the error means. It makes the topic it asks about and the
// partner's certificate (.stand/tls/clients/partner.pem) when they are missing.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/tlsprobe"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// cnRe: a CN that is also a file name in .stand/tls/clients.
var cnRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// hostRe: a DNS name.
var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// carried are the names the node certificates are valid for.
var carried = []string{"localhost", "kafka-1", "kafka-2", "kafka-3"}

func main() {
	o := tlsprobe.Defaults
	flag.StringVar(&o.Topic, "topic", o.Topic, "the topic each principal asks about (made when missing)")
	flag.StringVar(&o.CN, "cn", o.CN, "the CN of the partner's client certificate: its principal on MTLS")
	flag.StringVar(&o.WrongHost, "wrong-host", o.WrongHost, "case 3's ServerName: a name the node certificates do not carry")
	flag.DurationVar(&o.Timeout, "timeout", o.Timeout, "the bound of each connection")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(cnRe.MatchString(o.CN), "cn", o.CN, "must be 1 to 64 letters, digits, '.', '_' or '-'")
	fc.Require(hostRe.MatchString(o.WrongHost) && net.ParseIP(o.WrongHost) == nil && !slices.Contains(carried, o.WrongHost),
		"wrong-host", o.WrongHost, "must be a DNS name the node certificates do not carry (they carry 127.0.0.1, localhost and kafka-1..3)")
	fc.Require(o.Timeout >= time.Second && o.Timeout <= time.Minute, "timeout", o.Timeout, "must be 1s to 1m")
	fc.NoArgs()
	fc.ExitOnUsageError("tlsprobe")

	brewkit.Main("tlsprobe", func(ctx context.Context, cfg brewkit.Config) error {
		c, err := secure.Find(ctx, cfg)
		if err != nil {
			return err
		}
		s, err := tlsprobe.Prepare(ctx, c, o)
		if err != nil {
			return err
		}
		for _, m := range s.Made {
			fmt.Fprintf(os.Stderr, "tlsprobe: made %s\n", m)
		}
		r, err := tlsprobe.Run(ctx, s, o)
		if err != nil {
			return err
		}
		tlsprobe.Print(os.Stdout, r)
		if u := r.Unexpected(); len(u) > 0 {
			ended := "OK"
			if u[0].Err != nil {
				ended = u[0].Err.Error()
			}
			return fmt.Errorf("%d case(s) did not end as the lecture shows, first case %s (%s), at %s: %s; `make doctor` in the repository root checks the secured listeners",
				len(u), u[0].ID, u[0].Client, u[0].Step, ended)
		}
		return nil
	})
}
