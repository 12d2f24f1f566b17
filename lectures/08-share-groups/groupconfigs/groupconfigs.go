// Package groupconfigs reads the configs Kafka keeps per group, the config
// resource GROUP: for a share group its acquisition lock, delivery limit,
// isolation level, where a new group starts and the others. kadm has no
// helper for this resource, so the request is kmsg's DescribeConfigs.
package groupconfigs

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Config is one group config as the cluster describes it.
type Config struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Source is Kafka's word for where the value comes from: GROUP_CONFIG
	// when it is set on the group itself, DEFAULT_CONFIG or a broker
	// config otherwise.
	Source string `json:"source"`
}

// SetOnGroup reports whether the value is set on the group itself.
func (c Config) SetOnGroup() bool {
	return c.Source == kmsg.ConfigSourceGroupConfig.String()
}

// Set sets configs on group (IncrementalAlterConfigs) and waits until every
// broker describes them so. A broker applies a group config when it reads
// it from the metadata log, a few milliseconds after the controller took
// it; until then it describes, and serves the group with, the old value.
func Set(ctx context.Context, cl *kgo.Client, group string, configs map[string]string) error {
	if err := brewkit.SetGroupConfigs(ctx, cl, group, configs); err != nil {
		return err
	}
	brokers, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("configuring group %s: listing the brokers: %w", group, err)
	}
	var stale []string
	applied := func() bool {
		stale = stale[:0]
		for _, b := range brokers.Brokers {
			cs, err := describe(ctx, cl.Broker(int(b.NodeID)), group)
			for k, v := range configs {
				if c, ok := Lookup(cs, k); err != nil || !ok || !c.SetOnGroup() || c.Value != v {
					stale = append(stale, fmt.Sprintf("node %d: %s", b.NodeID, k))
				}
			}
		}
		return len(stale) == 0
	}
	if err := brewkit.WaitFor(ctx, 10*time.Second, 20*time.Millisecond, applied); err != nil {
		return fmt.Errorf("configuring group %s: not applied on every broker (%s): %w", group, strings.Join(stale, ", "), err)
	}
	return nil
}

// Describe returns every config the cluster keeps for group, sorted by name.
// Kafka answers for any group name, one that does not exist included: with
// the defaults.
func Describe(ctx context.Context, cl *kgo.Client, group string) ([]Config, error) {
	return describe(ctx, cl, group)
}

func describe(ctx context.Context, r kmsg.Requestor, group string) ([]Config, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("describing the configs of group %s: %w", group, err)
	}
	var out []Config
	for _, res := range resp.Resources {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return nil, fmt.Errorf("describing the configs of group %s: %w", group, err)
		}
		for _, c := range res.Configs {
			v := ""
			if c.Value != nil {
				v = *c.Value
			}
			out = append(out, Config{Name: c.Name, Value: v, Source: c.Source.String()})
		}
	}
	slices.SortFunc(out, func(a, b Config) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Share keeps the configs of a share group: share.* and the dead-letter
// topic of its archived records (errors.deadletterqueue.*, KIP-1191). The
// others are consumer.* (consumer groups) and streams.* (Kafka Streams
// groups).
func Share(cs []Config) []Config {
	var out []Config
	for _, c := range cs {
		if strings.HasPrefix(c.Name, "share.") || strings.HasPrefix(c.Name, "errors.deadletterqueue.") {
			out = append(out, c)
		}
	}
	return out
}

// Lookup finds the config called name.
func Lookup(cs []Config, name string) (Config, bool) {
	i := slices.IndexFunc(cs, func(c Config) bool { return c.Name == name })
	if i < 0 {
		return Config{}, false
	}
	return cs[i], true
}

// Result is what a run of group-configs read.
type Result struct {
	Group   string   `json:"group"`
	Configs []Config `json:"configs"`
}

// Run describes the configs of group, or with group "" of a group name no
// one uses (nothing is created: Kafka answers with the defaults). Unless all
// is set, it keeps the share group's configs.
func Run(ctx context.Context, cfg brewkit.Config, group string, all bool) (Result, error) {
	if group == "" {
		group = fmt.Sprintf("brew.tickets.configs.%06d", rand.IntN(1_000_000))
	}
	res := Result{Group: group}
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	cs, err := Describe(ctx, cl, group)
	if err != nil {
		return res, err
	}
	if !all {
		cs = Share(cs)
	}
	res.Configs = cs
	return res, nil
}

// Print writes the configs as a table, after a line that counts those set
// on the group itself.
func (r Result) Print(w io.Writer) {
	group, cs := r.Group, r.Configs
	set := 0
	for _, c := range cs {
		if c.SetOnGroup() {
			set++
		}
	}
	fmt.Fprintf(w, "group %s: %d of %d configs set on the group itself (GROUP_CONFIG)\n", group, set, len(cs))
	t := brewkit.NewTable(w, "CONFIG", "VALUE", "SOURCE")
	for _, c := range cs {
		v := c.Value
		if v == "" {
			v = `""`
		}
		t.Row(c.Name, v, c.Source)
	}
	t.Flush()
}
