// Command read-committed writes an order and its payment to two fresh topics
// in four transactions (committed, aborted, committed, and one left open) and
// shows, offset by offset, what read_uncommitted and read_committed consumers
// see: aborted records, the transaction markers that take offsets, and the
// last stable offset behind the high watermark while a transaction is open.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: read-committed [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("read-committed")
	brewkit.Main("read-committed", func(ctx context.Context, cfg brewkit.Config) error {
		cl, adm, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		iso, err := txns.RunIsolation(ctx, cfg, adm)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(iso)
		}
		iso.Print(os.Stdout)
		return nil
	})
}
