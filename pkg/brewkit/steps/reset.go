package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Reset deletes what a lecture leaves on the cluster, so that its demos can
// be repeated from a clean state: the groups its patterns match (consumer
// and share groups, with their dynamic group configs) and then its topics
// (with their configs). Internal topics are never touched. It returns what
// it deleted.
func Reset(ctx context.Context, cl *kgo.Client, l Lecture) (topics, groups []string, err error) {
	adm := kadm.NewClient(cl)
	if len(l.Groups) > 0 {
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("listing groups: %w", err)
		}
		for _, g := range listed.Sorted() {
			if Matches(l.Groups, g.Group) {
				groups = append(groups, g.Group)
			}
		}
		for _, g := range groups {
			if err := deleteGroupConfigs(ctx, cl, g); err != nil {
				return nil, nil, err
			}
		}
		if len(groups) > 0 {
			resp, err := adm.DeleteGroups(ctx, groups...)
			if err != nil {
				return nil, nil, fmt.Errorf("deleting groups: %w", err)
			}
			for _, r := range resp.Sorted() {
				if r.Err != nil {
					return nil, nil, fmt.Errorf("deleting group %s: %w (stop its members first)", r.Group, r.Err)
				}
			}
		}
	}
	if len(l.Topics) > 0 {
		td, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, groups, fmt.Errorf("listing topics: %w", err)
		}
		for _, name := range td.Names() {
			if !strings.HasPrefix(name, "__") && Matches(l.Topics, name) {
				topics = append(topics, name)
			}
		}
		slices.Sort(topics)
		if len(topics) > 0 {
			resp, err := adm.DeleteTopics(ctx, topics...)
			if err != nil {
				return nil, groups, fmt.Errorf("deleting topics: %w", err)
			}
			for _, r := range resp.Sorted() {
				if r.Err != nil {
					return nil, groups, fmt.Errorf("deleting topic %s: %w", r.Topic, r.Err)
				}
			}
		}
	}
	return topics, groups, nil
}

// deleteGroupConfigs removes the dynamic configs set on a group (lecture 08
// sets share.auto.offset.reset and the record lock on its share groups);
// kadm has no helper for the GROUP config resource, so this is kmsg.
func deleteGroupConfigs(ctx context.Context, cl *kgo.Client, group string) error {
	keys, err := GroupConfigs(ctx, cl, group)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	areq := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ar := kmsg.NewIncrementalAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for _, k := range keys {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
		ar.Configs = append(ar.Configs, c)
	}
	areq.Resources = append(areq.Resources, ar)
	aresp, err := areq.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("deleting the configs of group %s: %w", group, err)
	}
	for _, res := range aresp.Resources {
		if res.ErrorCode != 0 {
			return fmt.Errorf("deleting the configs of group %s: error code %d", group, res.ErrorCode)
		}
	}
	return nil
}

// GroupConfigs lists the configs set on group itself (source GROUP_CONFIG),
// through DescribeConfigs on the GROUP resource.
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
		for _, c := range res.Configs {
			if c.Source == kmsg.ConfigSourceGroupConfig {
				keys = append(keys, c.Name)
			}
		}
	}
	return keys, nil
}
