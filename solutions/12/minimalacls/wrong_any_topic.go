// A plausible wrong solution of exercise 12/minimalacls: READ on the topic
// `*`, "so the partner's consumer never breaks when we rename a topic", and
// READ on its group. The consumer works, and the partner reads every topic
// of the cluster, orders and payments included. The grader must fail it.
package minimalacls

import (
	"github.com/twmb/franz-go/pkg/kadm"
)

func PartnerACLs(principal, topic, group string) []*kadm.ACLBuilder {
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow(principal).Topics("*").Operations(kadm.OpRead),
		kadm.NewACLs().Allow(principal).Groups(group).Operations(kadm.OpRead),
	}
}
