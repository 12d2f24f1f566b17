package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ResetUsers deletes what a lecture gave the users its patterns match
// (lecture 12's partner and analytics): every ACL whose principal is
// User:NAME, every client quota of user=NAME, and the user's SCRAM
// credentials. It returns the users it found anything for.
func ResetUsers(ctx context.Context, cl *kgo.Client, l Lecture) ([]string, error) {
	if len(l.Users) == 0 {
		return nil, nil
	}
	adm := kadm.NewClient(cl)
	found := map[string]bool{}

	// Each list below is served by one broker from its copy of the
	// metadata, which may miss what was written a moment ago: a user found
	// in any of them loses all three (the ACLs go last, by filter).

	// ACLs: every principal the patterns match.
	acls := kmsg.NewPtrDescribeACLsRequest()
	acls.ResourceType = kmsg.ACLResourceTypeAny
	acls.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	acls.Operation = kmsg.ACLOperationAny
	acls.PermissionType = kmsg.ACLPermissionTypeAny
	described, err := acls.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(described.ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("listing ACLs: %w", err)
	}
	for _, r := range described.Resources {
		for _, a := range r.ACLs {
			if name, ok := strings.CutPrefix(a.Principal, "User:"); ok && Matches(l.Users, name) {
				found[name] = true
			}
		}
	}

	// Quotas: every user entity the patterns match.
	quotas, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: kmsg.QuotasMatchTypeAny}})
	if err != nil {
		return nil, fmt.Errorf("listing client quotas: %w", err)
	}
	var alter []kadm.AlterClientQuotaEntry
	for _, q := range quotas {
		matched := false
		for _, c := range q.Entity {
			if c.Type == "user" && c.Name != nil && Matches(l.Users, *c.Name) {
				matched, found[*c.Name] = true, true
			}
		}
		if !matched {
			continue
		}
		e := kadm.AlterClientQuotaEntry{Entity: q.Entity}
		for _, v := range q.Values {
			e.Ops = append(e.Ops, kadm.AlterClientQuotaOp{Key: v.Key, Remove: true})
		}
		alter = append(alter, e)
	}
	if len(alter) > 0 {
		res, err := adm.AlterClientQuotas(ctx, alter)
		if err != nil {
			return nil, fmt.Errorf("removing client quotas: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return nil, fmt.Errorf("removing the quotas of %s: %w", r.Entity, r.Err)
			}
		}
	}

	// SCRAM credentials, every mechanism.
	scrams, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing SCRAM users: %w", err)
	}
	var drop []kadm.DeleteSCRAM
	for name, u := range scrams {
		if !Matches(l.Users, name) {
			continue
		}
		found[name] = true
		for _, c := range u.CredInfos {
			drop = append(drop, kadm.DeleteSCRAM{User: name, Mechanism: c.Mechanism})
		}
	}
	if len(drop) > 0 {
		res, err := adm.AlterUserSCRAMs(ctx, drop, nil)
		if err != nil {
			return nil, fmt.Errorf("deleting SCRAM users: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return nil, fmt.Errorf("deleting SCRAM user %s: %w", r.User, r.Err)
			}
		}
	}
	users := make([]string, 0, len(found))
	for u := range found {
		users = append(users, u)
	}
	slices.Sort(users)

	// The ACLs of every user found, all of them at once: the controller
	// applies a delete filter to its own state, not to a broker's copy.
	if len(users) > 0 {
		del := kmsg.NewPtrDeleteACLsRequest()
		for _, u := range users {
			f := kmsg.NewDeleteACLsRequestFilter()
			f.ResourceType = kmsg.ACLResourceTypeAny
			f.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
			f.Principal = kmsg.StringPtr("User:" + u)
			f.Operation = kmsg.ACLOperationAny
			f.PermissionType = kmsg.ACLPermissionTypeAny
			del.Filters = append(del.Filters, f)
		}
		resp, err := del.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("deleting ACLs: %w", err)
		}
		for i, r := range resp.Results {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				return nil, fmt.Errorf("deleting the ACLs of User:%s: %w", users[i], err)
			}
		}
	}
	return users, nil
}
