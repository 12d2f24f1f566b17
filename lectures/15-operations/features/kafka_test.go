package features

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// toolLine is one line of `kafka-features describe`.
var toolLine = regexp.MustCompile(`(?m)^Feature: (\S+)\s+SupportedMinVersion: (.+?)\s+SupportedMaxVersion: (.+?)\s+FinalizedVersionLevel: (.+?)\s+Epoch: (\S+)\s*$`)

type toolFeature struct {
	min, max, finalized string
	epoch               int64 // -1 for "-"
}

// On real Kafka our view equals Kafka's own `kafka-features describe`, value
// for value: the same features, each node's supported range equal to the
// tool's, the same finalized level. The epoch is the metadata offset the
// answering node applied, which grows with any metadata change of the other
// tests: the tool's lies between ours before and ours after. Then the
// downgrade: our validate-only request is refused, and so is the tool's
// `downgrade --dry-run`.
func TestRealFeaturesMatchKafkaFeatures(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := env.Client(t)
	before, err := Describe(ctx, cl, Options{CheckDowngrade: true})
	require.NoError(t, err)

	cmd, err := env.Stand(t).Tool(ctx, "kafka-features", "describe")
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err, "kafka-features describe:\n%s", out)
	after, err := Describe(ctx, cl, Options{})
	require.NoError(t, err)
	t.Logf("kafka-features describe:\n%s", out)

	tool := map[string]toolFeature{}
	for _, m := range toolLine.FindAllStringSubmatch(string(out), -1) {
		f := toolFeature{min: m[2], max: m[3], finalized: m[4], epoch: -1}
		if m[5] != "-" {
			f.epoch, err = strconv.ParseInt(m[5], 10, 64)
			require.NoError(t, err, "epoch of %s", m[1])
		}
		tool[m[1]] = f
	}
	require.NotEmpty(t, tool, "no Feature: lines in the tool's output")

	var ours []string
	for _, f := range before.Features {
		ours = append(ours, f.Name)
	}
	var theirs []string
	for name := range tool {
		theirs = append(theirs, name)
	}
	require.ElementsMatch(t, theirs, ours, "the same features")

	lowest := before.Epoch
	for _, n := range before.Nodes {
		require.NoError(t, n.Err, "node %d", n.ID)
		lowest = min(lowest, n.Epoch)
	}
	for _, f := range before.Features {
		want := tool[f.Name]
		require.Len(t, f.Supported, len(before.Nodes), "%s: a range from every node", f.Name)
		for id, rng := range f.Supported {
			require.Equal(t, want.min, LevelString(f.Name, rng.Min), "%s SupportedMinVersion on node %d", f.Name, id)
			require.Equal(t, want.max, LevelString(f.Name, rng.Max), "%s SupportedMaxVersion on node %d", f.Name, id)
		}
		require.Equal(t, want.finalized, LevelString(f.Name, f.Finalized), "%s FinalizedVersionLevel", f.Name)
		require.GreaterOrEqual(t, want.epoch, lowest, "%s Epoch: not older than ours before the tool ran", f.Name)
		require.LessOrEqual(t, want.epoch, after.Epoch, "%s Epoch: not newer than ours after the tool ran", f.Name)
		require.NotEqual(t, "unknown level", f.Meaning, "%s %s: Kafka 4.4 finalizes it, the program must say what it does", f.Name, want.finalized)
	}

	// The downgrade dry run: Kafka's tool gets the answer we got.
	require.NotNil(t, before.Downgrade)
	require.True(t, before.Downgrade.Asked, before.Downgrade.Answer)
	t.Logf("our dry run to %s: %s", LevelString(MetadataVersion, before.Downgrade.To), before.Downgrade.Answer)
	cmd, err = env.Stand(t).Tool(ctx, "kafka-features", "downgrade", "--metadata", LevelString(MetadataVersion, before.Downgrade.To), "--dry-run")
	require.NoError(t, err)
	out, err = cmd.CombinedOutput()
	t.Logf("kafka-features downgrade --dry-run:\n%s", out)
	if before.Downgrade.Accepted {
		require.NoError(t, err, "we were told yes, the tool no")
		require.Contains(t, string(out), "metadata.version can be downgraded")
	} else {
		require.Error(t, err, "we were refused, the tool was not")
		require.Contains(t, string(out), "Can not downgrade metadata.version")
	}

	mv, _ := after.Feature(MetadataVersion)
	require.Equal(t, before.Downgrade.From, mv.Finalized, "the dry runs changed nothing")
}
