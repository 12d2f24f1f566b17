package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/tlsprobe"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// `make tls` on the real stand prints what the README shows (with a topic
// and a partner CN of the test's own, written as the lecture's), in a few
// seconds.
func TestTLSCommandReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	topic := env.FreshTopic(t, "tls", 1)
	cn := fmt.Sprintf("tls-partner-%d", rand.IntN(1e9))
	t.Cleanup(func() {
		for _, f := range []string{cn + ".pem", cn + "-key.pem"} {
			os.Remove(filepath.Join(c.TLS.Dir, "clients", f))
		}
	})

	bin := brewtest.BuildCmd(t)
	start := time.Now()
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", topic, "-cn", cn)
	took := time.Since(start)
	require.Zero(t, code, stderr)
	t.Logf("%s\n%s%s", took, stderr, out)
	require.Less(t, took, 15*time.Second)
	wd, err := os.Getwd()
	require.NoError(t, err)
	made, err := filepath.Rel(wd, filepath.Join(c.TLS.Dir, "clients", cn+".pem"))
	require.NoError(t, err)
	require.Equal(t, "tlsprobe: made "+made+" (CN="+cn+", from the course CA)\n", stderr, "it says what it made; the topic was there")
	names := strings.NewReplacer(topic, tlsprobe.Defaults.Topic, cn, tlsprobe.Defaults.CN)
	brewtest.MatchesReadme(t, "../../README.md", "tls", names.Replace(out))

	// Run again: the certificate is there and kept.
	_, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", topic, "-cn", cn)
	require.Zero(t, code, stderr)
	require.Empty(t, stderr)
}

// On the embedded stand (a simulation with no secured listeners) the program
// ends with one line saying which stand to start, exit 1.
func TestTLSOnTheEmbeddedStandIsOneLine(t *testing.T) {
	env := brewtest.Sim(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	require.Equal(t, 1, code, stderr)
	require.Empty(t, out)
	require.Equal(t, "tlsprobe: "+secure.ErrNoSecuredListeners.Error()+"\n", stderr)
}
