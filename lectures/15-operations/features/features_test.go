package features

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The course's cluster on the fast tier: the simulation reports no
// features, and the program says so instead of printing an empty table.
func TestDescribeOnTheTestCluster(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := Describe(ctx, env.Client(t), Options{CheckDowngrade: true})
	require.NoError(t, err)
	require.Equal(t, 3, r.Answered(), "every node answers ApiVersions")
	var out bytes.Buffer
	r.Print(&out)
	t.Logf("\n%s", out.String())
	if !env.Simulated {
		require.NotEmpty(t, r.Features)
		return
	}
	if len(r.Features) == 0 {
		require.Contains(t, out.String(), NoFeatures)
		require.Contains(t, out.String(), "embedded simulation")
		require.Nil(t, r.Downgrade)
	}
}

// kfake itself reports the features of the Kafka release it mimics: the
// whole path, from ApiVersions per node to the printed table, on a cluster
// that has some.
func TestDescribeKfakeFeatures(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := Describe(ctx, cl, Options{CheckDowngrade: true})
	require.NoError(t, err)
	require.Len(t, r.Nodes, 3)
	var out bytes.Buffer
	r.Print(&out)
	t.Logf("\n%s", out.String())
	if len(r.Features) == 0 {
		t.Skip("this kfake reports no features")
	}
	for _, f := range r.Features {
		require.Len(t, f.Supported, 3, "%s: every node's range", f.Name)
		require.Contains(t, out.String(), "\n"+f.Name+" ", "a row for %s", f.Name)
		require.Contains(t, out.String(), "  "+f.Name+" "+LevelString(f.Name, f.Finalized)+": ", "a meaning line for %s", f.Name)
	}
	if mv, ok := r.Feature(MetadataVersion); ok && mv.Finalized > 0 {
		require.NotNil(t, r.Downgrade, "the dry run was asked")
		require.Equal(t, PreviousRelease(mv.Finalized), r.Downgrade.To)
		// The dry run changed nothing.
		again, err := Describe(ctx, cl, Options{})
		require.NoError(t, err)
		mv2, _ := again.Feature(MetadataVersion)
		require.Equal(t, mv.Finalized, mv2.Finalized, "a validate-only request leaves metadata.version as it was")
	}
}

// merge: the finalized level comes from the node with the highest epoch,
// the upgrade target is the lowest max of the nodes, a node that does not
// know a feature holds it back, and disagreeing nodes are named.
func TestMerge(t *testing.T) {
	r := Result{Nodes: []Node{
		{ID: 1, Epoch: 10, Supported: map[string]Range{"group.version": {0, 1}, "share.version": {0, 2}, MetadataVersion: {7, 33}},
			Finalized: map[string]int16{"group.version": 1, "share.version": 1, MetadataVersion: 30}},
		{ID: 2, Epoch: 12, Supported: map[string]Range{"group.version": {0, 1}, "share.version": {0, 2}, MetadataVersion: {7, 33}, "new.version": {0, 1}},
			Finalized: map[string]int16{"group.version": 1, "share.version": 2, MetadataVersion: 30}},
		{ID: 3, Epoch: 11, Supported: map[string]Range{"group.version": {0, 1}, "share.version": {0, 2}, MetadataVersion: {7, 30}, "new.version": {0, 1}},
			Finalized: map[string]int16{"group.version": 1, "share.version": 2, MetadataVersion: 30}},
		{ID: 4, Err: errors.New("connection refused")},
	}}
	r.merge()
	require.Equal(t, int64(12), r.Epoch)
	names := []string{}
	for _, f := range r.Features {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"group.version", MetadataVersion, "new.version", "share.version"}, names)

	g, _ := r.Feature("group.version")
	require.Equal(t, int16(1), g.Finalized)
	require.False(t, g.CanUpgrade())

	mv, _ := r.Feature(MetadataVersion)
	require.Equal(t, "4.3-IV0", LevelString(mv.Name, mv.Finalized))
	require.False(t, mv.CanUpgrade(), "node 3 supports no more than 4.3-IV0")

	nv, _ := r.Feature("new.version")
	require.False(t, nv.CanUpgrade(), "node 1 does not know new.version")
	require.Equal(t, "unknown level", nv.Meaning)

	sv, _ := r.Feature("share.version")
	require.Equal(t, int16(2), sv.Finalized, "from node 2, the highest epoch")
	require.Equal(t, []int32{1}, sv.Disagree)

	var out bytes.Buffer
	r.Print(&out)
	t.Logf("\n%s", out.String())
	require.Contains(t, out.String(), "3.3-IV3..4.4-IV2 (1 2), 3.3-IV3..4.3-IV0 (3)")
	require.Contains(t, out.String(), "node 4 () did not answer")
	require.Contains(t, out.String(), "share.version: node 1 reports another finalized level")
}

// Upgrade targets and the commands that reach them.
func TestUpgrade(t *testing.T) {
	r := Result{Nodes: []Node{
		{ID: 1, Epoch: 5, Supported: map[string]Range{"kraft.version": {0, 1}, MetadataVersion: {7, 33}}, Finalized: map[string]int16{MetadataVersion: 29}},
		{ID: 2, Epoch: 5, Supported: map[string]Range{"kraft.version": {0, 1}, MetadataVersion: {7, 33}}, Finalized: map[string]int16{MetadataVersion: 29}},
	}}
	r.merge()
	k, _ := r.Feature("kraft.version")
	require.Equal(t, int16(0), k.Finalized, "a feature finalized at 0 is listed by no node")
	require.True(t, k.CanUpgrade())
	require.Equal(t, int16(1), k.UpgradeTo)
	require.Equal(t, "kafka-features upgrade --feature kraft.version=1", UpgradeCommand(k.Name, k.UpgradeTo))
	mv, _ := r.Feature(MetadataVersion)
	require.Equal(t, int16(33), mv.UpgradeTo)
	require.Equal(t, "kafka-features upgrade --metadata 4.4-IV2", UpgradeCommand(mv.Name, mv.UpgradeTo))
	var out bytes.Buffer
	r.Print(&out)
	require.Contains(t, out.String(), "metadata.version can go from 4.2-IV1 to 4.4-IV2")
	require.Contains(t, out.String(), "static quorum")
}

// Meanings: the known levels, "unknown level" for the rest.
func TestMeaning(t *testing.T) {
	require.Contains(t, Meaning("kraft.version", 1), "KIP-853")
	require.Contains(t, Meaning("group.version", 1), "KIP-848")
	require.Contains(t, Meaning("share.version", 1), "KIP-932")
	require.Contains(t, Meaning("transaction.version", 2), "KIP-890")
	require.Contains(t, Meaning("eligible.leader.replicas.version", 1), "KIP-966")
	require.Contains(t, Meaning("streams.version", 1), "KIP-1071")
	require.Contains(t, Meaning(MetadataVersion, 33), "Kafka 4.4")
	for _, unknown := range []struct {
		name  string
		level int16
	}{{"group.version", 7}, {"some.future.version", 1}, {MetadataVersion, 99}} {
		require.Equal(t, "unknown level", Meaning(unknown.name, unknown.level))
	}
	require.Equal(t, "UNKNOWN 99", LevelString(MetadataVersion, 99))
	require.Equal(t, "2", LevelString("share.version", 2))
	require.True(t, strings.HasPrefix(LevelString(MetadataVersion, 7), "3.3-IV3"))
	for level, want := range map[int16]string{33: "4.3-IV0", 31: "4.3-IV0", 30: "4.2-IV1", 22: "3.9-IV0", 8: "3.3-IV3", 40: "UNKNOWN 39"} {
		require.Equal(t, want, LevelString(MetadataVersion, PreviousRelease(level)), "before %d", level)
	}
}
