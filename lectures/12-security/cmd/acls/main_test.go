package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// On the embedded stand (a simulation with no secured listeners) acls ends
// with one line saying which stand to start, exit 1; describe lists the
// cluster's ACLs there too (none: kfake's ACLs are off on the embedded
// stand) and says so on stderr; -delete finds nothing to delete.
func TestAclsOnTheEmbeddedStandIsOneLine(t *testing.T) {
	env := brewtest.Sim(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	require.Equal(t, 1, code, stderr)
	require.Empty(t, out)
	require.Equal(t, "acls: "+secure.ErrNoSecuredListeners.Error()+"\n", stderr)

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "describe")
	require.Zero(t, code, stderr)
	require.Empty(t, out)
	require.Equal(t, "acls: no ACLs on the cluster (`make acls` creates the lecture's)\n", stderr)

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-delete")
	require.Zero(t, code, stderr)
	require.Equal(t, "deleted 0 ACLs of User:partner, User:analytics and User:order-service; the users stay\n", out)
}
