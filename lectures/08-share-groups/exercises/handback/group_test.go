package handback

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
)

// setGroupConfigs sets configs on the share group and waits until every
// broker describes them so (lecture 08's groupconfigs.Set): a broker serves
// the group with the old value until it has read the new one, and a group
// that starts at the latest offset reads none of the tickets.
func setGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string, configs map[string]string) {
	t.Helper()
	if err := groupconfigs.Set(ctx, cl, group, configs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		kadm.NewClient(cl).DeleteGroup(ctx, group) //nolint:errcheck // a leftover group is harmless
	})
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
