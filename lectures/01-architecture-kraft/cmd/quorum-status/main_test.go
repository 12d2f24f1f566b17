package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestUsageAndErrors(t *testing.T) {
	bin := brewtest.BuildCmd(t)

	_, stderr, code := brewtest.RunCmd(t, bin, "", "-h")
	if code != 0 || !strings.Contains(stderr, "usage: quorum-status") {
		t.Fatalf("-h: exit %d, stderr:\n%s", code, stderr)
	}
	_, _, code = brewtest.RunCmd(t, bin, "", "-nope")
	if code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	// Nothing listens on port 1: one clear line, exit 1, well within 10 s.
	start := time.Now()
	_, stderr, code = brewtest.RunCmd(t, bin, "127.0.0.1:1")
	took := time.Since(start)
	if code != 1 {
		t.Fatalf("no cluster: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 {
		t.Fatalf("no cluster: want one line, got %d:\n%s", lines, stderr)
	}
	for _, want := range []string{"127.0.0.1:1", "make up"} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("no cluster: %q missing from %q", want, stderr)
		}
	}
	if took > 10*time.Second {
		t.Fatalf("no cluster: took %s, want under 10 s", took)
	}
}

// make run: the program's whole output has the shape the README shows, on
// whichever cluster the tier provides.
func TestOutputMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	stdout, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	block := "quorum-status"
	if env.Simulated {
		block = "quorum-status-embedded"
	}
	brewtest.MatchesReadme(t, "../../README.md", block, stdout)
}

// Ctrl-C stops the live view within a second: exit status 130, one line.
func TestInterruptStopsCleanly(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	res := brewtest.Interrupt(t, bin, env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "RaftLeader")
	}, "-watch", "-interval", "200ms")
	if res.Stderr != "quorum-status: interrupted\n" {
		t.Fatalf("after Ctrl-C, stderr: %q", res.Stderr)
	}
}

// A managed cluster: SASL/SCRAM with the credentials from the environment, and
// no DescribeQuorum (plain kfake neither serves nor advertises it). The
// program prints what metadata gives, says the Raft leader is unavailable and
// why, and exits 0; -watch keeps running until Ctrl-C.
func TestClusterWithoutDescribeQuorumBehindSCRAM(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "barista", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	bin := brewtest.BuildCmd(t)
	bootstrap := strings.Join(kf.ListenAddrs(), ",")
	t.Setenv("KAFKA_SASL_MECHANISM", "SCRAM-SHA-256")
	t.Setenv("KAFKA_USERNAME", "barista")

	t.Setenv("KAFKA_PASSWORD", "wrong")
	_, stderr, code := brewtest.RunCmd(t, bin, bootstrap)
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "SASL") {
		t.Fatalf("wrong password: exit %d, want 1 and one line about SASL; stderr:\n%s", code, stderr)
	}

	t.Setenv("KAFKA_PASSWORD", "s3cret")
	stdout, stderr, code := brewtest.RunCmd(t, bin, bootstrap)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"Brokers:                 3\n", "RaftLeader:              unavailable (", "CurrentVoters:           unavailable\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}

	res := brewtest.Interrupt(t, bin, bootstrap, func(out string) bool {
		return strings.Count(out, "RaftLeader: unavailable") >= 1 && strings.Contains(out, "Brokers: [")
	}, "-watch", "-interval", "200ms")
	if !strings.Contains(res.Stdout, "RaftLeader: unavailable  Brokers: [0 1 2]") {
		t.Fatalf("-watch output:\n%s", res.Stdout)
	}
}
