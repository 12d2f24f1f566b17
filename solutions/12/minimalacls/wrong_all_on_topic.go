// A plausible wrong solution of exercise 12/minimalacls: ALL on the
// partner's topic ("it is only that one topic") and READ on its group. The
// consumer works, and the partner may also write shipments into Brew's
// topic, alter its configs and delete it. The grader must fail it.
package minimalacls

import (
	"github.com/twmb/franz-go/pkg/kadm"
)

func PartnerACLs(principal, topic, group string) []*kadm.ACLBuilder {
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpAll),
		kadm.NewACLs().Allow(principal).Groups(group).Operations(kadm.OpRead),
	}
}
