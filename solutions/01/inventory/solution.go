// The reference solution of exercise 01/inventory.
package inventory

import (
	"context"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is one cluster's page of the inventory.
type Cluster struct {
	ID      string
	Brokers []Broker // sorted by ID
}

// Broker is one registered broker.
type Broker struct {
	ID   int32
	Addr string // host:port, as clients reach it
	Rack string // "" when the broker has no rack
}

// Inventory asks the cluster: a Metadata request (kadm's BrokerMetadata,
// sent to the cluster rather than answered from the client's cache) names
// the cluster id and every registered broker, whichever broker answers.
func Inventory(ctx context.Context, cl *kgo.Client) (Cluster, error) {
	md, err := kadm.NewClient(cl).BrokerMetadata(kadm.WithAuthorizedOps(ctx))
	if err != nil {
		return Cluster{}, err
	}
	c := Cluster{ID: md.Cluster}
	for _, b := range md.Brokers {
		br := Broker{ID: b.NodeID, Addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		c.Brokers = append(c.Brokers, br)
	}
	slices.SortFunc(c.Brokers, func(a, b Broker) int { return int(a.ID - b.ID) })
	return c, nil
}
