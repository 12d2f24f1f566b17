package acls

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Resource is an ACL's resource pattern: a type, a name and whether the
// name is the resource's (LITERAL) or the start of it (PREFIXED).
type Resource struct {
	Type    kmsg.ACLResourceType
	Name    string
	Pattern kmsg.ACLResourcePatternType
}

// String is the resource as Kafka's tools print it.
func (r Resource) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", r.Type, r.Name, r.Pattern)
}

// Entry is who may (ALLOW) or may not (DENY) do an operation, from which host.
type Entry struct {
	Principal  string
	Host       string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// String is the entry as Kafka's tools print it.
func (e Entry) String() string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s)", e.Principal, e.Host, e.Operation, e.Permission)
}

// Binding is one ACL: an entry on a resource pattern.
type Binding struct {
	Resource
	Entry
}

// Resources are ACLs grouped by resource pattern, as kafka-acls --list
// prints them.
type Resources struct {
	Resource Resource
	Entries  []Entry
}

// List is every ACL the broker cl sends the request to knows (all of them
// with filter nil, else those of filter's principal).
func List(ctx context.Context, cl interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}, principal *string) ([]Binding, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	req.Principal = principal
	kr, err := cl.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := kr.(*kmsg.DescribeACLsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var out []Binding
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, Binding{
				Resource: Resource{Type: r.ResourceType, Name: r.ResourceName, Pattern: r.ResourcePatternType},
				Entry:    Entry{Principal: a.Principal, Host: a.Host, Operation: a.Operation, Permission: a.PermissionType},
			})
		}
	}
	return out, nil
}

// Group sorts bindings into resources, resources and each resource's
// entries in the order of their text (as kafka-acls prints a resource's
// entries; it prints the resources in no order).
func Group(bs []Binding) []Resources {
	var out []Resources
	for _, b := range bs {
		i := slices.IndexFunc(out, func(r Resources) bool { return r.Resource == b.Resource })
		if i < 0 {
			out = append(out, Resources{Resource: b.Resource})
			i = len(out) - 1
		}
		out[i].Entries = append(out[i].Entries, b.Entry)
	}
	slices.SortFunc(out, func(a, b Resources) int { return cmp.Compare(a.Resource.String(), b.Resource.String()) })
	for _, r := range out {
		slices.SortFunc(r.Entries, func(a, b Entry) int { return cmp.Compare(a.String(), b.String()) })
	}
	return out
}

// Print writes rs the way Kafka's kafka-acls --list does: a line naming each
// resource pattern, then its entries, each on a line of its own after a
// tab, and an empty line.
func Print(w io.Writer, rs []Resources) {
	for _, r := range rs {
		fmt.Fprintf(w, "Current ACLs for resource `%s`:\n", r.Resource)
		for _, e := range r.Entries {
			fmt.Fprintf(w, "\t%s\n", e)
		}
		fmt.Fprintln(w)
	}
}

// Ensure creates the ACLs of grants that do not exist yet, as the
// operator, waits until every node has them all (WaitBrokers), and returns
// how many it created.
func Ensure(ctx context.Context, cl *kgo.Client, grants ...Grant) (int, error) {
	created, err := ensure(ctx, cl, grants)
	if err != nil {
		return created, err
	}
	return created, WaitBrokers(ctx, cl, bindings(grants...), nil)
}

func ensure(ctx context.Context, cl *kgo.Client, grants []Grant) (int, error) {
	have, err := List(ctx, cl, nil)
	if err != nil {
		return 0, fmt.Errorf("operator listing ACLs: %w", err)
	}
	adm := kadm.NewClient(cl)
	created := 0
	for _, g := range grants {
		missing := 0
		for _, b := range g.Bindings() {
			if !slices.Contains(have, b) {
				missing++
			}
		}
		if missing == 0 {
			continue
		}
		rs, err := adm.CreateACLs(ctx, g.Builder())
		if err == nil {
			for _, r := range rs {
				if r.Err != nil {
					err = fmt.Errorf("%s on %s %s: %w", r.Principal, r.Type, r.Name, r.Err)
					break
				}
			}
		}
		if err != nil {
			return created, fmt.Errorf("operator creating ACLs: %w", err)
		}
		created += missing
	}
	return created, nil
}

// Delete deletes the ACLs of grants as the operator, waits until no node
// has any of them, and returns how many there were.
func Delete(ctx context.Context, cl *kgo.Client, grants ...Grant) (int, error) {
	deleted, err := deleteACLs(ctx, cl, grants)
	if err != nil {
		return deleted, err
	}
	return deleted, WaitBrokers(ctx, cl, nil, bindings(grants...))
}

func deleteACLs(ctx context.Context, cl *kgo.Client, grants []Grant) (int, error) {
	adm := kadm.NewClient(cl)
	deleted := 0
	for _, g := range grants {
		rs, err := adm.DeleteACLs(ctx, g.Builder())
		if err == nil {
			for _, r := range rs {
				if r.Err != nil {
					err = r.Err
					break
				}
				deleted += len(r.Deleted)
			}
		}
		if err != nil {
			return deleted, fmt.Errorf("operator deleting ACLs: %w", err)
		}
	}
	return deleted, nil
}

// WaitBrokers waits until every broker's authorizer has each ACL of present
// and none of absent: an ACL reaches the brokers through the metadata log,
// and a check that ran before would see the old rights.
func WaitBrokers(ctx context.Context, cl *kgo.Client, present, absent []Binding) error {
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	var lagging string
	err = waitFor(ctx, 15*time.Second, func() (bool, error) {
		for _, id := range md.Brokers.NodeIDs() {
			have, err := List(ctx, cl.Broker(int(id)), nil)
			if err != nil {
				return false, err
			}
			for _, b := range present {
				if !slices.Contains(have, b) {
					lagging = fmt.Sprintf("node %d has no %s on %s", id, b.Entry, b.Resource)
					return false, nil
				}
			}
			for _, b := range absent {
				if slices.Contains(have, b) {
					lagging = fmt.Sprintf("node %d still has %s on %s", id, b.Entry, b.Resource)
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil && lagging != "" {
		return fmt.Errorf("waiting for the ACLs on every node: %s: %w", lagging, err)
	}
	return err
}

// waitFor polls cond every 50 ms until it holds, fails, ctx ends or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
