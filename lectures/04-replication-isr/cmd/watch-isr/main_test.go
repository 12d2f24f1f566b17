package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// make run's first screen, piped: the table the README shows.
func TestOnceMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := filepath.Join(t.TempDir(), "watch-isr")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-once")
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+env.Config.Bootstrap())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("watch-isr -once: %v", err)
	}
	brewtest.MatchesReadme(t, "../../README.md", "watch-isr", string(out), brewtest.WithoutSimNote)

	if code := exitCode(t, exec.Command(bin, "-nope")); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}
