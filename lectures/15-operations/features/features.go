// Package features reads what `kafka-features describe` shows: every feature
// the cluster has finalized and the range of levels each node supports,
// asked of each node in turn with ApiVersions (KIP-584), and says what each
// finalized level turns on and whether the cluster could go further.
package features

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Range is the levels of a feature one node supports.
type Range struct {
	Min, Max int16
}

// Node is one node's ApiVersions answer, its features part.
type Node struct {
	ID   int32
	Addr string
	// Supported is every feature the node's software supports, by name.
	Supported map[string]Range
	// Finalized is every feature the cluster finalized above level 0, as
	// this node knows it. Kafka lists none at level 0: kafka-features
	// prints such a feature as FinalizedVersionLevel: 0.
	Finalized map[string]int16
	// Epoch is the node's finalized features epoch: on KRaft the offset of
	// the metadata log the node has applied (KRaftMetadataCache.features),
	// so it grows with every metadata record, not only with features, and
	// with the no-op records the active controller writes every
	// metadata.max.idle.interval.ms (500 ms). -1: unknown.
	Epoch int64
	// UpdateFeaturesMax is the newest UpdateFeatures version the node
	// serves (-1: none); version 1 brought validate-only requests.
	UpdateFeaturesMax int16
	Err               error // the node did not answer; the rest is empty
}

// Feature is one feature across the nodes.
type Feature struct {
	Name      string
	Finalized int16 // the level the cluster runs; 0 when it finalized none
	// Supported is each answering node's range, by node id.
	Supported map[int32]Range
	// Disagree lists the nodes whose finalized level differs from
	// Finalized (a node that has not applied the latest change yet).
	Disagree []int32
	Meaning  string // what Finalized turns on
	// UpgradeTo is the highest level every node supports, when it is above
	// Finalized: the level `kafka-features upgrade` could finalize. 0: none.
	UpgradeTo int16
}

// CanUpgrade reports whether every node supports a level above the finalized one.
func (f Feature) CanUpgrade() bool { return f.UpgradeTo > f.Finalized }

// Check is the answer of a validate-only UpdateFeatures request: what the
// cluster would say to a change, without making it.
type Check struct {
	Feature  string
	From, To int16
	Asked    bool   // false: not asked (Why says why)
	Accepted bool   // the cluster would make the change
	Answer   string // the cluster's error, or why it was not asked
}

// Result is what Describe found.
type Result struct {
	Nodes    []Node    // by node id
	Features []Feature // by name
	Epoch    int64     // the highest finalized epoch a node reported
	// Downgrade is the cluster's answer to a dry run of a metadata.version
	// downgrade to the previous release's newest level (what rolling the
	// software back one release needs); nil when it was not asked.
	Downgrade *Check
	// Simulated is true on the embedded simulation (franz-go's kfake).
	Simulated bool
}

// Answered is how many nodes answered.
func (r Result) Answered() int {
	n := 0
	for _, nd := range r.Nodes {
		if nd.Err == nil {
			n++
		}
	}
	return n
}

// Feature returns the feature of that name.
func (r Result) Feature(name string) (Feature, bool) {
	i := slices.IndexFunc(r.Features, func(f Feature) bool { return f.Name == name })
	if i < 0 {
		return Feature{}, false
	}
	return r.Features[i], true
}

// Options says what Describe does beyond reading.
type Options struct {
	// CheckDowngrade asks the cluster, validate only, whether it would take
	// metadata.version down to the previous release's newest level (4.4-IV2
	// to 4.3-IV0), a safe downgrade. Nothing changes: the request has
	// ValidateOnly set, and it is sent only when every node serves
	// UpdateFeatures v1 or newer (v0 has no ValidateOnly).
	CheckDowngrade bool
}

// Describe asks every broker of cl's cluster for its ApiVersions, one by
// one, and puts the features together. A node that does not answer within
// ctx is reported in its Node; Describe fails only when none answers.
func Describe(ctx context.Context, cl *kgo.Client, o Options) (Result, error) {
	meta, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("listing the brokers: %w", err)
	}
	var r Result
	for _, b := range meta.Brokers {
		r.Nodes = append(r.Nodes, askNode(ctx, cl, b))
	}
	slices.SortFunc(r.Nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	if r.Answered() == 0 {
		if len(r.Nodes) == 0 {
			return Result{}, errors.New("the cluster lists no brokers")
		}
		return Result{}, fmt.Errorf("no broker answered ApiVersions: node %d: %w", r.Nodes[0].ID, r.Nodes[0].Err)
	}
	r.Simulated, _ = brewkit.IsSimulated(ctx, cl) // unknown counts as real Kafka
	r.merge()
	if o.CheckDowngrade {
		r.Downgrade = checkDowngrade(ctx, cl, r)
	}
	return r, nil
}

// askNode sends ApiVersions to one broker.
func askNode(ctx context.Context, cl *kgo.Client, b kadm.BrokerDetail) Node {
	n := Node{ID: b.NodeID, Addr: fmt.Sprintf("%s:%d", b.Host, b.Port), Epoch: -1, UpdateFeaturesMax: -1}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	// Since v3 a broker wants the client's software named (KIP-511); the
	// client fills it in for cl.Request, not for a request to one broker.
	req.ClientSoftwareName, req.ClientSoftwareVersion = "brew-course", "15"
	kresp, err := cl.Broker(int(b.NodeID)).Request(ctx, req)
	if err == nil {
		err = kerr.ErrorForCode(kresp.(*kmsg.ApiVersionsResponse).ErrorCode)
	}
	if err != nil {
		n.Err = err
		return n
	}
	resp := kresp.(*kmsg.ApiVersionsResponse)
	n.Supported = map[string]Range{}
	for _, f := range resp.SupportedFeatures {
		n.Supported[f.Name] = Range{f.MinVersion, f.MaxVersion}
	}
	n.Finalized = map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		n.Finalized[f.Name] = f.MaxVersionLevel
	}
	n.Epoch = resp.FinalizedFeaturesEpoch
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(kmsg.UpdateFeatures) {
			n.UpdateFeaturesMax = k.MaxVersion
		}
	}
	return n
}

// merge puts the nodes' answers together, feature by feature. The cluster's
// finalized level is the one of the node with the highest epoch, the one
// that has applied the most of the metadata log.
func (r *Result) merge() {
	var newest *Node
	names := map[string]bool{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Err != nil {
			continue
		}
		if newest == nil || n.Epoch > newest.Epoch {
			newest = n
		}
		for name := range n.Supported {
			names[name] = true
		}
		for name := range n.Finalized {
			names[name] = true
		}
	}
	r.Epoch = newest.Epoch
	for _, name := range slices.Sorted(maps.Keys(names)) {
		f := Feature{Name: name, Finalized: newest.Finalized[name], Supported: map[int32]Range{}}
		upgrade := int16(-1)
		for _, n := range r.Nodes {
			if n.Err != nil {
				continue
			}
			if n.Finalized[name] != f.Finalized {
				f.Disagree = append(f.Disagree, n.ID)
			}
			rng, ok := n.Supported[name]
			if !ok {
				upgrade = 0 // a node that does not know the feature holds it back
				continue
			}
			f.Supported[n.ID] = rng
			if upgrade < 0 || rng.Max < upgrade {
				upgrade = rng.Max
			}
		}
		if upgrade > f.Finalized {
			f.UpgradeTo = upgrade
		}
		f.Meaning = Meaning(name, f.Finalized)
		r.Features = append(r.Features, f)
	}
}

// checkDowngrade asks the cluster, validate only, to take metadata.version
// down to the previous release's newest level, as a safe downgrade.
func checkDowngrade(ctx context.Context, cl *kgo.Client, r Result) *Check {
	mv, ok := r.Feature(MetadataVersion)
	if !ok || mv.Finalized <= 1 {
		return nil // the cluster reports no metadata.version: nothing to ask
	}
	c := &Check{Feature: MetadataVersion, From: mv.Finalized, To: PreviousRelease(mv.Finalized)}
	for _, n := range r.Nodes {
		if n.Err != nil || n.UpdateFeaturesMax < 1 {
			c.Answer = fmt.Sprintf("not asked: node %d does not serve UpdateFeatures v1 (validate only)", n.ID)
			return c
		}
	}
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.TimeoutMillis = 10_000
	req.ValidateOnly = true
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature = MetadataVersion
	u.MaxVersionLevel = c.To
	u.UpgradeType = 2 // SAFE_DOWNGRADE, as kafka-features downgrade without --unsafe
	u.AllowDowngrade = true
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	c.Asked = true
	if err != nil {
		c.Asked = false
		c.Answer = "not answered: " + err.Error()
		return c
	}
	code, msg := resp.ErrorCode, resp.ErrorMessage
	for _, res := range resp.Results {
		if code == 0 && res.ErrorCode != 0 {
			code, msg = res.ErrorCode, res.ErrorMessage
		}
	}
	if code == 0 {
		c.Accepted = true
		c.Answer = "the cluster would accept it"
		return c
	}
	c.Answer = kerr.ErrorForCode(code).Error()
	if msg != nil && *msg != "" {
		c.Answer += ": " + *msg
	}
	return c
}
