package crashdrill_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// A kitchen that fails (its reads refused or unanswered) ends the drill with
// the kitchen's own line, the only line on stderr: not that line and then
// "the kitchen failed: exit status 1".
func TestDrillEndsWithTheKitchensLine(t *testing.T) {
	t.Setenv("KAFKA_TIMEOUT", "2s")
	bin := brewtest.BuildCmdAt(t, "../cmd/crash-drill")
	for _, tc := range []struct {
		name  string
		fault func(*sim.Cluster)
		want  string
	}{
		{"reads refused", func(c *sim.Cluster) { c.FailFetches(kerr.TopicAuthorizationFailed) }, "TOPIC_AUTHORIZATION_FAILED"},
		{"reads unanswered", func(c *sim.Cluster) { c.Hang(kmsg.Fetch) }, "has answered no fetch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := brewtest.Sim(t)
			tc.fault(env.Sim)
			stdout, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-orders", "20", "-crashes", "1")
			t.Logf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "crash-drill: kitchen: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("want exit 1 and one line starting %q holding %q", "crash-drill: kitchen: ", tc.want)
			}
		})
	}
}
