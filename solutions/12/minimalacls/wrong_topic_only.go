// A plausible wrong solution of exercise 12/minimalacls: "a consumer reads
// a topic", so READ (and DESCRIBE) on the topic and nothing for the group. A
// consumer without a group reads it; the partner's consumer in its group is
// refused GROUP_AUTHORIZATION_FAILED as soon as it looks for the group's
// coordinator. The grader must fail it.
package minimalacls

import (
	"github.com/twmb/franz-go/pkg/kadm"
)

func PartnerACLs(principal, topic, group string) []*kadm.ACLBuilder {
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpRead, kadm.OpDescribe),
	}
}
