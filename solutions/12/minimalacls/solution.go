// The reference solution of exercise 12/minimalacls.
package minimalacls

import (
	"github.com/twmb/franz-go/pkg/kadm"
)

// PartnerACLs returns two ACLs, both READ and both on a name (the LITERAL
// pattern, kadm's default): READ on the topic, for Fetch and ListOffsets
// (READ includes the DESCRIBE that Metadata asks for), and READ on the group,
// for finding its coordinator, joining, heartbeats and the offsets it fetches
// and commits. Nothing on the cluster: a consumer creates no topic.
func PartnerACLs(principal, topic, group string) []*kadm.ACLBuilder {
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpRead),
		kadm.NewACLs().Allow(principal).Groups(group).Operations(kadm.OpRead),
	}
}
