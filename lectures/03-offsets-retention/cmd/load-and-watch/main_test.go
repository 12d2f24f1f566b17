package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestStopAndResumeMatchReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "watch", 3)
	group := fmt.Sprintf("brew.test.watch-%d", time.Now().UnixNano())
	bin := brewtest.BuildCmd(t)
	args := []string{"-topic", topic, "-group", group, "-duration", "4s", "-rate", "30", "-work", "1ms"}

	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "group "+group+" has no committed offsets") {
		t.Fatalf("first run should say the group starts fresh:\n%s", out)
	}
	_, stopped, ok := strings.Cut(out, "\nstopped:")
	if !ok {
		t.Fatalf("no final section:\n%s", out)
	}
	brewtest.MatchesReadme(t, "../../README.md", "load-and-watch-stopped", "stopped:"+stopped)

	out, stderr, code = brewtest.RunCmd(t, bin, env.Config.Bootstrap(), args...)
	if code != 0 {
		t.Fatalf("second run: exit %d, %s\n%s", code, stderr, out)
	}
	first, _, _ := strings.Cut(out, "\n")
	brewtest.MatchesReadme(t, "../../README.md", "load-and-watch-resume", first)
	if !strings.Contains(first, " "+group+" ") {
		t.Fatalf("the resume line names another group: %s", first)
	}
}

// The group's consumer cannot fetch: the run ends with the reason.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t), "-duration", "60s", "-topic", "brew.test.fetch-fault", "-group", "brew.test.fetch-fault")
}

// The topic is deleted under a running load-and-watch: it stops with that
// error in one line, not a silent zero count; with -rate 0 only the
// consumer's fetches can notice.
func TestDeletedTopicIsReported(t *testing.T) {
	for _, rate := range []string{"30", "0"} {
		t.Run("rate "+rate, func(t *testing.T) {
			env := brewtest.Cluster(t)
			topic := env.FreshTopic(t, "deleted", 3)
			group := fmt.Sprintf("brew.test.deleted-%d", time.Now().UnixNano())
			run := brewtest.Start(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-topic", topic, "-group", group, "-rate", rate, "-duration", "2m", "-work", "1ms")
			brewtest.Eventually(t, 30*time.Second, "the live view", func() (bool, string) {
				return strings.Contains(run.Stdout(), "  group "+group+"  "), run.Output()
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := env.Admin(t).DeleteTopics(ctx, topic); err != nil {
				t.Fatal(err)
			}
			deleted := time.Now()
			code := run.Wait(t, time.Minute)
			stderr := strings.TrimSpace(run.Stderr())
			if code != 1 || strings.Contains(stderr, "\n") || !strings.Contains(stderr, topic) || !strings.Contains(stderr, "UNKNOWN_TOPIC") {
				t.Fatalf("after the topic was deleted: exit %d, want 1 and one line naming the topic and UNKNOWN_TOPIC_…; stderr:\n%s", code, stderr)
			}
			t.Logf("reported %s after the deletion: %s", time.Since(deleted).Round(time.Millisecond), stderr)
		})
	}
}

// Ctrl-C is how the lecture stops it: the committed offsets are printed, then
// exit 130 within a second.
func TestInterruptPrintsTheCommittedOffsets(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "interrupt", 3)
	group := fmt.Sprintf("brew.test.interrupt-%d", time.Now().UnixNano())
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "total lag")
	}, "-topic", topic, "-group", group, "-work", "1ms")
	if !strings.Contains(res.Stdout, "\nstopped: wrote ") || !strings.Contains(res.Stdout, "run again to resume from them") {
		t.Fatalf("no summary after Ctrl-C:\n%s", res.Stdout)
	}
	if res.Stderr != "load-and-watch: interrupted\n" {
		t.Fatalf("stderr after Ctrl-C: %q", res.Stderr)
	}
	// Ctrl-C stops the writing; the consumer reads the rest before it commits.
	m := regexp.MustCompile(`stopped: wrote (\d+), processed (\d+);`).FindStringSubmatch(res.Stdout)
	if m == nil || m[1] != m[2] {
		t.Fatalf("after Ctrl-C the consumer should have processed every order written (fresh topic and group):\n%s", res.Stdout)
	}
}
