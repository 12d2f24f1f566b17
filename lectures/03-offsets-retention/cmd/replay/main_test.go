package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestDryRunMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "replay", 3)
	group := fmt.Sprintf("brew.test.replay-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The README's state: partitions 0-2 end at 89, 59 and 61, and the group
	// committed 89, 59 and 60 (one record came after its last commit).
	ends := []int64{89, 59, 61}
	committed := []int64{89, 59, 60}
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p, n := range ends {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var offs kadm.Offsets
	for p, at := range committed {
		offs.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: at, LeaderEpoch: -1})
	}
	adm := env.Admin(t)
	if _, err := adm.CommitOffsets(ctx, group, offs); err != nil {
		t.Fatal(err)
	}

	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-group", group, "-topic", topic, "-shift-by", "-20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "replay-plan", out)
	if _, _, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-to-earliest", "-to-latest"); code != 2 {
		t.Fatalf("two targets: exit %d, want 2", code)
	}
}

// While a member is in the group, the reset is refused, as the README shows.
func TestActiveGroupRefusalMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "replay-active", 1)
	group := fmt.Sprintf("brew.test.replay-active-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	cons := env.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))
	brewtest.Eventually(t, 30*time.Second, "the consumer joins and the group settles", func() (bool, string) {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		cons.PollRecords(pctx, 1) // drives the join; the topic is empty
		pcancel()
		gs, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		return len(gs[group].Members) == 1 && gs[group].State == "Stable", gs[group].State
	})
	bin := brewtest.BuildCmd(t)
	_, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-group", group, "-topic", topic, "-shift-by", "-20")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "replay-active", stderr)
}

// A topic that does not exist is an error naming it and the cluster's
// topics, not an empty plan with exit status 0.
func TestMissingTopicIsOneLine(t *testing.T) {
	env := brewtest.Sim(t)
	topic := env.FreshTopic(t, "replay-missing", 1)
	_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-topic", "no.such.topic", "-to-earliest")
	want := "replay: topic no.such.topic does not exist (the cluster has "
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, topic) ||
		!strings.Contains(stderr, "make load-and-watch TOPIC=no.such.topic") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, want 1 and one line starting %q, naming %s and make load-and-watch; stderr:\n%s", code, want, topic, stderr)
	}
}

// -to-datetime takes a time or a duration ago, both in the past.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"10m":                  now.Add(-10 * time.Minute),
		"1h30m":                now.Add(-90 * time.Minute),
		"2026-11-27T09:00:00Z": time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC),
	} {
		if got, err := parseTime(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-10m", "0s", "2026-11-27T11:00:00Z", "yesterday"} {
		if got, err := parseTime(in, now); err == nil {
			t.Errorf("%s: %v, want an error", in, got)
		}
	}
}
