// Command verify reads the orders and the kitchen's events with
// read_committed and checks that every order was cooked exactly once:
// one KitchenStarted, then one OrderReady.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

func main() {
	in := flag.String("in", brewkit.Orders.Name, "topic of the orders")
	out := flag.String("out", brewkit.Kitchen.Name, "topic of the kitchen events")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: verify [-in T] [-out T] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("in", *in)
	fc.Topic("out", *out)
	fc.NoArgs()
	fc.ExitOnUsageError("verify")
	brewkit.Main("verify", func(ctx context.Context, cfg brewkit.Config) error {
		rep, err := kitchen.Verify(ctx, cfg, *in, *out)
		if err != nil {
			return err
		}
		switch {
		case *asJSON:
			err = json.NewEncoder(os.Stdout).Encode(rep)
		case !rep.NoneCooked():
			rep.Print(os.Stdout)
		}
		if err == nil && rep.NoneCooked() {
			return fmt.Errorf("no kitchen has cooked yet: %s has no kitchen events for the %d orders in %s; `make kitchen` starts one (Ctrl-C when it idles), then run `make verify` again", *out, rep.Orders, *in)
		}
		if err == nil && !rep.OK() {
			err = errors.New("not every order was cooked exactly once")
		}
		return err
	})
}
