package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
			if err := brewkit.DeleteGroupConfigs(ctx, cl, g); err != nil {
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
