package brewkit

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The embedded stand answers DescribeConfigs for this broker config with
// SimulatedValue; real Kafka knows no such config and answers nothing.
const (
	SimulatedConfig = "brew.stand"
	SimulatedValue  = "embedded simulation"
)

// SimulatedController is the node the simulation makes its fixed controller
// (and Raft leader); it cannot be stopped there. It lives here, not in package
// sim, so that lecture programs can name it without linking kfake.
const SimulatedController int32 = 3

// SimulatedNote is what programs print beside a result that would differ on real Kafka.
const SimulatedNote = "embedded simulation: on real Kafka this comes from the Raft quorum and the replicas"

// IsSimulated reports whether cl talks to the embedded stand (franz-go's kfake)
// rather than to real Kafka.
func IsSimulated(ctx context.Context, cl *kgo.Client) (bool, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	res.ResourceName = "" // cluster-wide broker defaults
	res.ConfigNames = []string{SimulatedConfig}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, fmt.Errorf("asking the cluster which stand it is: %w", err)
	}
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			if c.Name == SimulatedConfig && c.Value != nil && *c.Value == SimulatedValue {
				return true, nil
			}
		}
	}
	return false, nil
}
