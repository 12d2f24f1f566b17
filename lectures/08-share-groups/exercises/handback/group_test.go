package handback

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// setGroupConfigs sets configs on the share group and waits until every
// broker describes them so: a broker applies a group config when it reads it
// from the metadata log, and until then serves the group with the old value
// (a group that starts at the latest offset reads none of the tickets).
func setGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string, configs map[string]string) {
	t.Helper()
	if err := brewkit.SetGroupConfigs(ctx, cl, group, configs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		kadm.NewClient(cl).DeleteGroup(ctx, group) //nolint:errcheck // a leftover group is harmless
	})
	brokers, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := ""
	err = brewkit.WaitFor(ctx, 30*time.Second, 50*time.Millisecond, func() bool {
		stale = ""
		for _, b := range brokers.Brokers {
			got, err := describeGroup(ctx, cl.Broker(int(b.NodeID)), group)
			for k, v := range configs {
				if err != nil || got[k] != v {
					stale = fmt.Sprintf("node %d: %s=%q (%v)", b.NodeID, k, got[k], err)
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("configuring group %s: the brokers did not apply %v: %s: %v", group, configs, stale, err)
	}
}

// describeGroup is the group's configs as one broker describes them.
func describeGroup(ctx context.Context, b *kgo.Broker, group string) (map[string]string, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, b)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, res := range resp.Resources {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return nil, err
		}
		for _, c := range res.Configs {
			if c.Value != nil {
				out[c.Name] = *c.Value
			}
		}
	}
	return out, nil
}

// lag is the share group's lag on partition 0 of topic: the tickets not yet
// accepted, rejected or archived (-1 before the group has read it).
func lag(ctx context.Context, adm *kadm.Client, group, topic string) int64 {
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return -1
	}
	if o, ok := offs[group].Offsets.Lookup(topic, 0); ok && o.Err == nil {
		return o.Lag
	}
	return -1
}
