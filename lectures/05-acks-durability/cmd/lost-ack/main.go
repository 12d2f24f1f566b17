// Command lost-ack shows acks=1 losing writes the leader acknowledged: both
// followers hang, the leader takes a burst alone, crashes, and a follower
// without the burst becomes the leader. The same fault with acks=all loses
// nothing acknowledged. Real Kafka only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lostack"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: lost-ack [-json]\n\n"+
			"Pauses, kills and starts nodes of the native or docker stand that is up in this checkout.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("lost-ack")

	brewkit.Main("lost-ack", func(ctx context.Context, cfg brewkit.Config) error {
		s, err := stand.FindRunning("the demo pauses and kills nodes")
		if err != nil {
			return err
		}
		res, err := lostack.Run(ctx, cfg, s, func(line string) { fmt.Fprintln(os.Stderr, line) })
		if err != nil {
			return brewkit.LeftBehind(err, "a killed or paused node may stay so: `make restore` brings it back")
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		return nil
	})
}
