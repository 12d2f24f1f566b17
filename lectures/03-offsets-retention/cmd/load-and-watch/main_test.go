package main

import (
	"fmt"
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
