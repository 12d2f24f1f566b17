// A plausible wrong solution of exercise 01/inventory: it takes the
// addresses the client was configured with (its seeds) for the cluster, and
// numbers them as the course stand's table does (node 1 on the first
// address, node 2 on the second), as if the bootstrap list were the
// cluster. A client given one address lists one broker. The grader must
// fail it.
package inventory

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Cluster struct {
	ID      string
	Brokers []Broker
}

type Broker struct {
	ID   int32
	Addr string
	Rack string
}

func Inventory(ctx context.Context, cl *kgo.Client) (Cluster, error) {
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return Cluster{}, err
	}
	c := Cluster{ID: md.Cluster}
	seeds, _ := cl.OptValue(kgo.SeedBrokers).([]string)
	for i, addr := range seeds {
		c.Brokers = append(c.Brokers, Broker{ID: int32(i + 1), Addr: addr})
	}
	return c, nil
}
