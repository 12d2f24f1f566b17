// Command fanout shows two consumer groups each reading every order of a
// topic while the members of one group split it, and a group with more
// members than partitions leaving one idle.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/fanout"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

func main() {
	c := fanout.Defaults
	flag.IntVar(&c.Orders, "orders", c.Orders, "orders to write")
	proto := flag.String("protocol", string(c.Protocol), groups.ProtocolUsage)
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: fanout [-orders 600] [-protocol eager|cooperative|consumer] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	p, err := groups.ParseProtocol(*proto)
	fc.Require(err == nil, "protocol", *proto, "use eager, cooperative or consumer")
	fc.Require(c.Orders >= 1, "orders", c.Orders, "must be at least 1")
	fc.NoArgs()
	fc.ExitOnUsageError("fanout")
	c.Protocol = p
	brewkit.Main("fanout", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := fanout.Run(ctx, cfg, c)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		return nil
	})
}
