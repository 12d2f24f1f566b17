package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "100ms"}, {"-duration", "1h0m0s"}, {"-bytes", "10"}, {"-max-records", "0"},
	} {
		brewtest.BadFlag(t, "../partition-count", args...)
	}
}

// make partition-count: a short run prints the measurement, the table of
// Brew's topics with the counts the lecture depends on, and the key
// movements, and exits 0 with nothing on stderr.
func TestPartitionCount(t *testing.T) {
	env := brewtest.Cluster(t)
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-duration", "1s", "-max-records", "20000")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		`(?m)^producing 300-byte order events to brew\.ops\.partitions\.\d+ \(1 partition, RF 3, acks=all\) for 1s or 20000 records$`,
		`(?m)^brew\.orders\.v1 .* 12 +consumers wanted$`,
		`(?m)^80 shops +63 moved \(78\.8%\) +52 moved \(65\.0%\) +35 moved \(43\.8%\)$`,
		`(?m)^10,000 order ids +8585 moved \(85\.9%\) +7530 moved \(75\.3%\) +4959 moved \(49\.6%\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// make partition-count as pasted, on real Kafka: what the README shows.
func TestPartitionCountReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap())
	if code != 0 || strings.TrimSpace(stderr) != "" {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	brewtest.MatchesReadme(t, "../../README.md", "partition-count", out)
}
