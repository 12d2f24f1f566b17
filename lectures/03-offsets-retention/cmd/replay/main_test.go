package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestDryRunMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "replay", 3)
	group := fmt.Sprintf("brew.test.replay-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(3) {
		for range 30 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := env.Admin(t)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CommitOffsets(ctx, group, ends.Offsets()); err != nil {
		t.Fatal(err)
	}

	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-group", group, "-topic", topic, "-shift-by", "-20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "replay-plan", out, brewtest.Names)
	if !strings.Contains(out, "records to re-read: 60") {
		t.Fatalf("3 partitions shifted by 20:\n%s", out)
	}
	if _, _, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-to-earliest", "-to-latest"); code != 2 {
		t.Fatalf("two targets: exit %d, want 2", code)
	}
}
