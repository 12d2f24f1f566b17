package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/users"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// `make users` on the real stand prints what the README shows (with users
// of the test's own, written as the lecture's), and `make users-delete`
// deletes them, then finds them gone.
func TestUsersCommandReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	n := rand.IntN(1e9)
	partner, analytics := fmt.Sprintf("partner-%d", n), fmt.Sprintf("analytics-%d", n)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := users.Delete(ctx, c, partner, analytics); err != nil {
			t.Errorf("deleting the test's users: %v", err)
		}
	})
	names := strings.NewReplacer(partner, "partner", analytics, "analytics")

	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-partner", partner, "-analytics", analytics)
	require.Zero(t, code, stderr)
	t.Log("\n" + out)
	// Other tests' users come and go in the list: keep the stand's admin and ours.
	brewtest.MatchesReadme(t, "../../README.md", "users", names.Replace(onlyUsers(out, "brew", partner, analytics)))

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-partner", partner, "-analytics", analytics, "-delete")
	require.Zero(t, code, stderr)
	brewtest.MatchesReadme(t, "../../README.md", "users-delete", names.Replace(out))
	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-partner", partner, "-analytics", analytics, "-delete")
	require.Zero(t, code, stderr)
	require.Equal(t, 2, strings.Count(out, "none (deleted before)"), out)
}

// onlyUsers drops the rows of the users table whose user is not one of keep.
func onlyUsers(out string, keep ...string) string {
	var b strings.Builder
	inTable := false
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "USER "):
			inTable = true
		case strings.TrimSpace(l) == "":
			inTable = false
		case inTable && !slices.Contains(keep, strings.Fields(l)[0]):
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// On the embedded stand (a simulation with no secured listeners) the program
// ends with one line saying which stand to start, exit 1.
func TestUsersOnTheEmbeddedStandIsOneLine(t *testing.T) {
	env := brewtest.Sim(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	require.Equal(t, 1, code, stderr)
	require.Empty(t, out)
	require.Equal(t, "users: "+secure.ErrNoSecuredListeners.Error()+"\n", stderr)
}
