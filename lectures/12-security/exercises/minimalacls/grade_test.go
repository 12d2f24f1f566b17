package minimalacls

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/12-security/secure"
)

const (
	// records is how many shipments the grader writes to the partner's topic.
	records = 6

	standHint      = "this exercise needs the course stand's secured listeners: `make up STAND=native` (or STAND=docker) starts them"
	buildHint      = "each builder needs a principal (Allow), a resource (Topics, Groups) and operations: kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpRead)"
	topicHint      = "a consumer needs READ on its topic: Fetch and ListOffsets ask for it, and READ includes the DESCRIBE the metadata asks for (lecture 12: ACLs)"
	groupHint      = "a consumer in a group needs READ on the group: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetFetch and OffsetCommit ask for it (lecture 12: ACLs)"
	writeHint      = "READ is all a consumer needs: WRITE on the topic (ALL includes it) lets the partner write shipments of its own into Brew's topic"
	otherTopicHint = "a wildcard (`*`) or a prefix grants every topic it matches, today's and the ones made later: name the topic itself (the LITERAL pattern, kadm's default)"
	otherGroupHint = "a wildcard (`*`) or a prefixed group lets the partner join, and commit offsets for, any group it matches, other teams' consumers included: name the partner's group itself"
	createHint     = "CREATE on the cluster or on topics lets a principal make topics: a consumer never needs it"
	extraHint      = "least privilege: every ACL beyond READ on the topic and READ on the group is a right the partner's consumer never uses, there for whoever steals its password"
	principalHint  = "the partner logs in as the principal PartnerACLs is given: allow that one"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	if err != nil {
		grade.Fail(t, standHint, "the cluster has no secured listeners to log in on: %v", err)
	}
	adm := env.Admin(t)

	user, password, dropUser, err := c.FreshUser(ctx, "brew-ex-minimalacls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropUser(context.Background()) }) //nolint:errcheck // best effort
	principal := "User:" + user
	topic := freshTopic(ctx, t, adm, "brew.secure.ex-minimalacls-")
	other := freshTopic(ctx, t, adm, "brew.secure.ex-minimalacls-other-")
	suffix := strconv.Itoa(rand.IntN(1e9))
	group, otherGroup := "brew.secure.ex-minimalacls-"+suffix, "brew.secure.ex-minimalacls-other-"+suffix
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		adm.DeleteGroups(dctx, group, otherGroup) //nolint:errcheck // best effort; they may not exist
	})

	// The operator's shipments, with every node up.
	prod := env.Client(t)
	for i := 1; i <= records; i++ {
		r := &kgo.Record{Topic: topic, Key: []byte(brewkit.OrderID(int64(i))), Value: []byte(`{"type":"OrderReady"}`)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("writing to %s: %v", topic, err)
		}
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: other, Value: []byte(`{"type":"OrderPlaced"}`)}).FirstErr(); err != nil {
		t.Fatalf("writing to %s: %v", other, err)
	}

	// The student's ACLs, created by the operator.
	var created []kadm.CreateACLsResult
	t.Cleanup(func() { dropCreated(prod, principal, created) })
	for i, b := range PartnerACLs(principal, topic, group) {
		if b == nil {
			grade.Fail(t, buildHint, "PartnerACLs returned a nil builder (number %d)", i+1)
		}
		res, err := adm.CreateACLs(ctx, b)
		created = append(created, res...)
		if err != nil {
			grade.Fail(t, buildHint, "creating the ACLs of builder %d: %v", i+1, err)
		}
		for _, r := range res {
			if r.Err != nil {
				grade.Fail(t, buildHint, "Kafka refused the ACL %s: %v %s", aclText(r), r.Err, r.ErrMessage)
			}
		}
	}
	mine := distinct(created, principal)
	yours := "your ACLs: " + listText(created)
	t.Logf("%s", yours)
	if err := secure.WaitACLs(ctx, prod, principal, len(mine)); err != nil {
		t.Fatal(err)
	}
	for _, r := range created {
		if r.Principal != principal && r.Permission == kmsg.ACLPermissionTypeAllow {
			grade.Fail(t, principalHint, "the ACL %s is for %s, not the partner's principal %s", aclText(r), r.Principal, principal)
		}
	}
	partner, err := c.Password(user, password)
	if err != nil {
		t.Fatal(err)
	}

	// It works: the partner reads the topic, then consumes it in its group.
	got, err := consume(ctx, t, partner, topic, records, 20*time.Second)
	switch {
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		grade.Fail(t, topicHint, "the partner could not read %s: %v (%s)", topic, kerr.TopicAuthorizationFailed.Message, yours)
	case err != nil:
		grade.Fail(t, topicHint, "the partner could not read %s: %v (%s)", topic, err, yours)
	case got < records:
		grade.Fail(t, topicHint, "the partner read %d of the %d records of %s in 20 s (%s)", got, records, topic, yours)
	}
	cl, got, err := consumeGroup(ctx, t, partner, topic, group, records, 30*time.Second)
	switch {
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		grade.Fail(t, groupHint, "the partner's consumer could not join group %s: %v (%s)", group, kerr.GroupAuthorizationFailed.Message, yours)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		grade.Fail(t, topicHint, "the partner's consumer in group %s could not read %s: %v (%s)", group, topic, kerr.TopicAuthorizationFailed.Message, yours)
	case err != nil:
		grade.Fail(t, groupHint, "the partner's consumer in group %s failed: %v (%s)", group, err, yours)
	case got < records:
		grade.Fail(t, groupHint, "the partner's consumer in group %s read %d of the %d records of %s in 30 s (%s)", group, got, records, topic, yours)
	}
	cctx, ccancel := context.WithTimeout(ctx, 15*time.Second)
	err = cl.CommitUncommittedOffsets(cctx)
	ccancel()
	if err != nil {
		grade.Fail(t, groupHint, "the partner's consumer read %s in group %s and could not commit its offsets: %v (%s)", topic, group, err, yours)
	}
	cl.Close()

	// And nothing more.
	if err := produce(ctx, t, partner, topic); err == nil {
		grade.Fail(t, writeHint, "the partner wrote a record to %s: its consumer only reads it (%s)", topic, yours)
	} else if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("the partner's write to %s failed, and not with TOPIC_AUTHORIZATION_FAILED: %v", topic, err)
	}
	got, err = consume(ctx, t, partner, other, 1, 15*time.Second)
	if got > 0 {
		grade.Fail(t, otherTopicHint, "the partner read a record of %s, a topic nobody gave it (%s)", other, yours)
	} else if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("the partner neither read %s nor was refused it in 15 s: %v", other, err)
	}
	cl, got, err = consumeGroup(ctx, t, partner, topic, otherGroup, 1, 20*time.Second)
	cl.Close()
	if got > 0 {
		grade.Fail(t, otherGroupHint, "the partner consumed %s in group %s, which is not its group (%s)", topic, otherGroup, yours)
	} else if !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("the partner's consumer in group %s was neither refused nor read anything in 20 s: %v", otherGroup, err)
	}
	if made, err := createTopic(ctx, t, partner, adm); err == nil {
		grade.Fail(t, createHint, "the partner created the topic %s (%s)", made, yours)
	} else if !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("the partner's CreateTopics failed, and not with an authorization error: %v", err)
	}

	// Nothing the consumer does not use, even what the checks above do not try.
	for _, r := range mine {
		if r.Permission != kmsg.ACLPermissionTypeAllow || needed(r, topic, group) {
			continue
		}
		if r.Pattern != kadm.ACLPatternLiteral || r.Name == "*" {
			hint := otherTopicHint
			if r.Type == kmsg.ACLResourceTypeGroup {
				hint = otherGroupHint
			}
			grade.Fail(t, hint, "the ACL %s matches more than the partner's own %s (%s)", aclText(r), strings.ToLower(r.Type.String()), yours)
		}
		grade.Fail(t, extraHint, "the ACL %s gives the partner more than its consumer uses (%s)", aclText(r), yours)
	}
}

// freshTopic is a topic of the grader's own with 3 partitions, deleted when
// the test ends.
func freshTopic(ctx context.Context, t *testing.T, adm *kadm.Client, prefix string) string {
	t.Helper()
	name, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: prefix, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	return name
}

// consume reads topic from the start as cfg's principal, with no group,
// until it has want records, the cluster refuses it, or limit passes.
func consume(ctx context.Context, t *testing.T, cfg brewkit.Config, topic string, want int, limit time.Duration) (int, error) {
	t.Helper()
	cl, got, err := poll(ctx, t, cfg, want, limit, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cl.Close()
	return got, err
}

// consumeGroup is consume with the consumer in group, autocommit off; it
// returns the client, which the caller closes.
func consumeGroup(ctx context.Context, t *testing.T, cfg brewkit.Config, topic, group string, want int, limit time.Duration) (*kgo.Client, int, error) {
	t.Helper()
	return poll(ctx, t, cfg, want, limit, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
}

func poll(ctx context.Context, t *testing.T, cfg brewkit.Config, want int, limit time.Duration, opts ...kgo.Opt) (*kgo.Client, int, error) {
	t.Helper()
	cl, err := kgo.NewClient(append(cfg.Opts(), append([]kgo.Opt{kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)...)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	got := 0
	for got < want {
		fs := cl.PollFetches(pctx)
		if pctx.Err() != nil {
			return cl, got, fmt.Errorf("nothing more within %s", limit)
		}
		for _, e := range fs.Errors() {
			return cl, got, e.Err
		}
		got += fs.NumRecords()
	}
	return cl, got, nil
}

// produce writes one record to topic as cfg's principal.
func produce(ctx context.Context, t *testing.T, cfg brewkit.Config, topic string) error {
	t.Helper()
	cl, err := kgo.NewClient(append(cfg.Opts(), kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(15*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte(`{"type":"OrderDelivered"}`)}).FirstErr()
}

// createTopic has cfg's principal create a topic; one that was created is
// deleted again by the operator's admin.
func createTopic(ctx context.Context, t *testing.T, cfg brewkit.Config, operator *kadm.Client) (string, error) {
	t.Helper()
	cl, err := kgo.NewClient(cfg.Opts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	name := "brew.secure.ex-minimalacls-made-" + strconv.Itoa(rand.IntN(1e9))
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(cctx, 1, 3, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err == nil {
		t.Cleanup(func() {
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			operator.DeleteTopic(dctx, name) //nolint:errcheck // best effort
		})
	}
	return name, err
}

// needed reports whether r is one a consumer of topic in group uses: READ
// (or the DESCRIBE it includes) on the topic and on the group, by name.
func needed(r kadm.CreateACLsResult, topic, group string) bool {
	if r.Pattern != kadm.ACLPatternLiteral {
		return false
	}
	if r.Operation != kadm.OpRead && r.Operation != kadm.OpDescribe {
		return false
	}
	return (r.Type == kmsg.ACLResourceTypeTopic && r.Name == topic) ||
		(r.Type == kmsg.ACLResourceTypeGroup && r.Name == group)
}

// distinct are the ACLs created for principal, each once.
func distinct(created []kadm.CreateACLsResult, principal string) []kadm.CreateACLsResult {
	seen := map[string]bool{}
	var out []kadm.CreateACLsResult
	for _, r := range created {
		k := aclText(r)
		if r.Principal != principal || r.Err != nil || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

// dropCreated deletes the ACLs the student's builders created for another
// principal than the partner's (the partner's go with its user), each one
// exactly.
func dropCreated(cl *kgo.Client, principal string, created []kadm.CreateACLsResult) {
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, r := range created {
		if r.Principal == principal || r.Err != nil {
			continue
		}
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = r.Type, kmsg.StringPtr(r.Name), r.Pattern
		f.Principal, f.Host = kmsg.StringPtr(r.Principal), kmsg.StringPtr(r.Host)
		f.Operation, f.PermissionType = r.Operation, r.Permission
		req.Filters = append(req.Filters, f)
	}
	if len(req.Filters) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req.RequestWith(ctx, cl) //nolint:errcheck // best effort
}

// aclText is one ACL as a person reads it: ALLOW READ on TOPIC brew.x.
func aclText(r kadm.CreateACLsResult) string {
	s := fmt.Sprintf("%s %s on %s %s", r.Permission, r.Operation, r.Type, r.Name)
	if r.Pattern != kadm.ACLPatternLiteral {
		s += " (" + r.Pattern.String() + ")"
	}
	if r.Host != "*" {
		s += " from " + r.Host
	}
	return s
}

func listText(created []kadm.CreateACLsResult) string {
	if len(created) == 0 {
		return "none"
	}
	var out []string
	for _, r := range created {
		out = append(out, aclText(r))
	}
	return strings.Join(out, ", ")
}
