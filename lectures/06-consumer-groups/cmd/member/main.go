// Command member is a loud consumer group member: it prints every
// assignment, revocation and loss with a timestamp, its member id and the
// group's generation (or its member epoch under the consumer protocol), and
// each record it processes. Start several in different terminals and watch
// the group share the partitions.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

func main() {
	m := groups.Member{}
	flag.StringVar(&m.Name, "name", fmt.Sprintf("m-%d", os.Getpid()), "this member's name in the output")
	flag.StringVar(&m.Group, "group", "brew.kitchen", "consumer group")
	flag.StringVar(&m.Topic, "topic", brewkit.Orders.Name, "topic to read")
	proto := flag.String("protocol", string(groups.Cooperative), groups.ProtocolUsage)
	flag.DurationVar(&m.Work, "work", 100*time.Millisecond, "processing time per record")
	flag.StringVar(&m.InstanceID, "instance-id", "", "group.instance.id: a static member")
	quiet := flag.Bool("quiet", false, "print assignments only, not each record")
	asJSON := flag.Bool("json", false, "print one JSON object per event")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: member [-name N] [-group G] [-topic T] [-protocol eager|cooperative|consumer] [-work 100ms] [-instance-id ID] [-quiet] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	p, err := groups.ParseProtocol(*proto)
	fc.Name("name", m.Name)
	fc.Name("group", m.Group)
	fc.Topic("topic", m.Topic)
	fc.Require(err == nil, "protocol", *proto, "use eager, cooperative or consumer")
	fc.Require(m.Work >= 0, "work", m.Work, "must not be negative")
	fc.NoArgs()
	fc.ExitOnUsageError("member")
	m.Protocol = p

	brewkit.Main("member", func(ctx context.Context, cfg brewkit.Config) error {
		var mu sync.Mutex
		enc := json.NewEncoder(os.Stdout)
		m.OnStart = func() { // once the settings and the cluster are good
			if !*asJSON { // stdout stays JSON lines with -json
				fmt.Printf("%s joins group %s on %s (%s); Ctrl-C leaves\n", m.Name, m.Group, m.Topic, m.Protocol.Label())
			}
		}
		return m.Run(ctx, cfg, func(e groups.Event) {
			if *quiet && e.Kind == "processed" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if *asJSON {
				enc.Encode(e) //nolint:errcheck // stdout
				return
			}
			fmt.Println(e)
		})
	})
}
