package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/quotas"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// `make quotas-delete` on the real stand deletes both users, their ACL and
// a quota left on noisy; after a whole run (the quota removed already) it
// prints what the README shows; run again, it finds nothing.
func TestDeleteCommandReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	n := rand.Uint32()
	noisy, quiet := fmt.Sprintf("quota-noisy-%d", n), fmt.Sprintf("quota-quiet-%d", n)
	cl, adm, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	defer cl.Close()
	t.Cleanup(func() { quotas.Delete(context.Background(), adm, noisy, quiet) }) //nolint:errcheck // best effort: the test deletes them itself
	require.NoError(t, quotas.Ensure(ctx, adm, noisy, quiet))
	require.NoError(t, quotas.SetQuota(ctx, adm, noisy, quotas.Defaults.Rate))

	bin := brewtest.BuildCmd(t)
	args := []string{"-noisy", noisy, "-quiet", quiet, "-delete"}
	names := strings.NewReplacer(noisy, "noisy", quiet, "quiet")
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), args...)
	require.Zero(t, code, stderr)
	require.Equal(t, quotas.ProducerByteRate+" removed from [noisy]; ACLs deleted: 2; SCRAM passwords deleted: [noisy quiet]\n", names.Replace(out),
		"a quota an interrupted run left goes too")
	q, err := quotas.Describe(ctx, adm, noisy)
	require.NoError(t, err)
	require.Empty(t, q, "no quota left on user=%s", noisy)

	// After a whole run the quota is removed already: the README's case.
	require.NoError(t, quotas.Ensure(ctx, adm, noisy, quiet))
	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), args...)
	require.Zero(t, code, stderr)
	brewtest.MatchesReadme(t, "../../README.md", "quotas-delete", names.Replace(out))

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), args...)
	require.Zero(t, code, stderr)
	require.Equal(t, quotas.ProducerByteRate+" removed from []; ACLs deleted: 0; SCRAM passwords deleted: []\n", out, "nothing left the second time")
}

// On the embedded stand, which has no secured listeners, quotas ends at
// once with one line saying so, exit 1.
func TestEmbeddedStandIsOneLine(t *testing.T) {
	env := brewtest.Sim(t)
	for _, args := range [][]string{nil, {"-delete"}} {
		out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), args...)
		require.Equal(t, 1, code, "%v: %s", args, stderr)
		require.Empty(t, out)
		require.Equal(t, "quotas: "+secure.ErrNoSecuredListeners.Error()+"\n", stderr, "%v", args)
	}
}
