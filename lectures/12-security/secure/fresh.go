package secure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// FreshUser creates a SCRAM-SHA-512 user of its own for one run of a test or
// a grader: prefix and a random number name it, and a random password is its
// login. It waits until every secured listener takes the login (each node
// learns of a new credential from the metadata log a moment after the
// create), so that what the caller checks next is not a node still catching
// up. drop deletes the user's ACLs (every ACL whose principal is User:NAME)
// and its credentials; it works once ctx is cancelled, for up to 10 s.
func (c Cluster) FreshUser(ctx context.Context, prefix string) (user, password string, drop func(context.Context) error, err error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	if err != nil {
		return "", "", nil, err
	}
	user = fmt.Sprintf("%s%d", prefix, n)
	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		return "", "", nil, err
	}
	password = hex.EncodeToString(secret)

	cl, err := brewkit.NewClient(c.Admin)
	if err != nil {
		return "", "", nil, err
	}
	adm := kadm.NewClient(cl)
	drop = func(ctx context.Context) error {
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		aclErr := DropACLs(ctx, adm, "User:"+user)
		res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha512}}, nil)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			err = fmt.Errorf("deleting the user %s: %w", user, err)
		}
		return errors.Join(aclErr, err)
	}
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		drop(ctx) //nolint:errcheck // the create's error is the one to report
		return "", "", nil, fmt.Errorf("creating the user %s: %w", user, err)
	}
	if err := c.waitLogin(ctx, user, password); err != nil {
		drop(ctx) //nolint:errcheck // the wait's error is the one to report
		return "", "", nil, err
	}
	return user, password, drop, nil
}

// waitLogin waits until user logs in with password on every secured listener.
func (c Cluster) waitLogin(ctx context.Context, user, password string) error {
	cfg, err := c.Password(user, password)
	if err != nil {
		return err
	}
	for _, addr := range cfg.Brokers {
		one := cfg
		one.Brokers = []string{addr}
		var last error
		err := brewkit.WaitFor(ctx, 20*time.Second, 100*time.Millisecond, func() bool {
			last = loginOnce(ctx, one)
			return last == nil
		})
		if err != nil {
			return fmt.Errorf("the new user %s could not log in on %s within 20 s: %v", user, addr, last)
		}
	}
	return nil
}

// loginOnce logs in on cfg's one seed and asks for the metadata of no topic,
// which needs no ACL.
func loginOnce(ctx context.Context, cfg brewkit.Config) error {
	cl, err := kgo.NewClient(append(cfg.Opts(), kgo.DialTimeout(3*time.Second))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	_, err = req.RequestWith(rctx, cl)
	return err
}

// DropACLs deletes every ACL whose principal is principal (User:NAME).
func DropACLs(ctx context.Context, adm *kadm.Client, principal string) error {
	b := kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Allow(principal).AllowHosts().Deny(principal).DenyHosts().Operations()
	res, err := adm.DeleteACLs(ctx, b)
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("deleting the ACLs of %s: %w", principal, err)
	}
	return nil
}

// WaitACLs waits until every node of cl's cluster describes n ACLs
// whose principal is principal: each node's authorizer learns of new ACLs from
// the metadata log a moment after they are created, and a request it answers
// before that is judged by the ACLs it had.
func WaitACLs(ctx context.Context, cl *kgo.Client, principal string, n int) error {
	brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
	if err != nil {
		return err
	}
	for _, id := range brokers.NodeIDs() {
		var got int
		var last error
		err := brewkit.WaitFor(ctx, 15*time.Second, 50*time.Millisecond, func() bool {
			got, last = describedACLs(ctx, cl.Broker(int(id)), principal)
			return last == nil && got == n
		})
		if err != nil {
			return fmt.Errorf("node %d describes %d ACLs of %s, not %d, after 15 s (%v)", id, got, principal, n, last)
		}
	}
	return nil
}

func describedACLs(ctx context.Context, b *kgo.Broker, principal string) (int, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Principal = kmsg.StringPtr(principal)
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := b.Request(rctx, req)
	if err != nil {
		return 0, err
	}
	r := resp.(*kmsg.DescribeACLsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return 0, err
	}
	n := 0
	for _, res := range r.Resources {
		n += len(res.ACLs)
	}
	return n, nil
}
