package brewkit

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group configs are settings Kafka keeps per group (share.auto.offset.reset,
// share.record.lock.duration.ms, session timeouts of the consumer protocol),
// set with IncrementalAlterConfigs and read with DescribeConfigs on the GROUP
// resource. kadm has no helper for that resource, so these speak kmsg.

// SetGroupConfigs sets configs on group. A share group, for one, reads from
// the latest offset unless share.auto.offset.reset is earliest.
func SetGroupConfigs(ctx context.Context, cl *kgo.Client, group string, configs map[string]string) error {
	var cs []kmsg.IncrementalAlterConfigsRequestResourceConfig
	for k, v := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, kmsg.StringPtr(v), kmsg.IncrementalAlterConfigOpSet
		cs = append(cs, c)
	}
	return alterGroupConfigs(ctx, cl, group, fmt.Sprintf("configuring group %s %v", group, configs), cs)
}

// DeleteGroupConfigs removes every config set on group itself: the broker's
// defaults apply again.
func DeleteGroupConfigs(ctx context.Context, cl *kgo.Client, group string) error {
	keys, err := GroupConfigs(ctx, cl, group)
	if err != nil || len(keys) == 0 {
		return err
	}
	var cs []kmsg.IncrementalAlterConfigsRequestResourceConfig
	for _, k := range keys {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
		cs = append(cs, c)
	}
	return alterGroupConfigs(ctx, cl, group, "deleting the configs of group "+group, cs)
}

func alterGroupConfigs(ctx context.Context, cl *kgo.Client, group, doing string, cs []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.Configs = kmsg.ConfigResourceTypeGroupConfig, group, cs
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			msg := ""
			if r.ErrorMessage != nil {
				msg = ": " + *r.ErrorMessage
			}
			return fmt.Errorf("%s: %w%s", doing, err, msg)
		}
	}
	return nil
}

// GroupConfigs lists the names of the configs set on group itself (source
// GROUP_CONFIG).
func GroupConfigs(ctx context.Context, cl *kgo.Client, group string) ([]string, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describing the configs of group %s: %w", group, err)
	}
	var keys []string
	for _, res := range resp.Resources {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return nil, fmt.Errorf("describing the configs of group %s: %w", group, err)
		}
		for _, c := range res.Configs {
			if c.Source == kmsg.ConfigSourceGroupConfig {
				keys = append(keys, c.Name)
			}
		}
	}
	return keys, nil
}
