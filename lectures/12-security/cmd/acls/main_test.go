package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/acls"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
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

// describe -principal lists that principal's ACLs only, in kafka-acls'
// format (on kfake with ACLs, logged in as its super user).
func TestDescribeOnePrincipal(t *testing.T) {
	env := brewtest.SimWith(t, sim.Options{
		Login:  &sim.Login{User: "brew", Pass: "brew-secret", Mechanism: secure.Mechanism},
		Denied: &sim.Login{User: "nobody", Pass: "nobody-secret", Mechanism: secure.Mechanism},
	})
	t.Setenv(brewkit.EnvSASL, secure.Mechanism)
	t.Setenv(brewkit.EnvUser, "brew")
	t.Setenv(brewkit.EnvPassword, "brew-secret")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, _, err := brewkit.Connect(ctx, env.Config)
	require.NoError(t, err)
	defer cl.Close()
	_, err = acls.Ensure(ctx, cl, acls.Lecture.Plan()...)
	require.NoError(t, err)

	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "describe", "-principal", "User:partner")
	require.Zero(t, code, stderr)
	require.Equal(t, "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=brew.partner.courier, patternType=LITERAL)`:\n"+
		"\t(principal=User:partner, host=*, operation=READ, permissionType=ALLOW)\n\n"+
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=brew.shipments.v1, patternType=LITERAL)`:\n"+
		"\t(principal=User:partner, host=*, operation=DESCRIBE, permissionType=ALLOW)\n"+
		"\t(principal=User:partner, host=*, operation=READ, permissionType=ALLOW)\n\n", out)

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "describe")
	require.Zero(t, code, stderr)
	require.Equal(t, 7, strings.Count(out, "Current ACLs for resource"), out)
	require.Equal(t, 10, strings.Count(out, "\t(principal="), out)
}
