package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewcontainers"
)

// These start real containers: they need a Docker engine (the docker tiers
// and the real tier in CI have one) and the image (BREW_KAFKA_IMAGE).

func needDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short")
	}
	if os.Getenv("BREW_REQUIRE_DOCKER") != "1" && exec.Command("docker", "info").Run() != nil {
		t.Skip("needs a Docker engine")
	}
}

// ours lists the containers the helper started (by its label).
func ours(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+brewcontainers.Label).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

func build(t *testing.T) string {
	t.Helper()
	bin := t.TempDir() + "/brewcontainers"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func waitGone(t *testing.T, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(ours(t)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: containers still there after a minute: %v", what, ours(t))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// serve removes the cluster when its parent goes away: its stdin closes,
// as when a test process ends, crashes or is interrupted.
func TestServeRemovesTheClusterWhenStdinCloses(t *testing.T) {
	needDocker(t)
	if n := len(ours(t)); n > 0 {
		t.Fatalf("%d containers of an earlier run are there: go run . clean", n)
	}
	cmd := exec.Command(build(t), "serve")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || strings.Count(sc.Text(), "127.0.0.1:") != 3 {
		t.Fatalf("no bootstrap line: %q", sc.Text())
	}
	if n := len(ours(t)); n != 3 {
		t.Fatalf("%d containers running, want 3", n)
	}
	stdin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		t.Fatal("serve did not end within a minute of its stdin closing")
	}
	waitGone(t, "after stdin closed")
}

// run passes the command's failure on as its own exit status and removes
// the cluster all the same.
func TestRunRemovesTheClusterWhenTheCommandFails(t *testing.T) {
	needDocker(t)
	cmd := exec.Command(build(t), "run", "--", "sh", "-c", `echo "$KAFKA_BOOTSTRAP"; exit 3`)
	out, err := cmd.Output()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 3 {
		t.Fatalf("run: %v, want exit status 3", err)
	}
	if strings.Count(string(out), "127.0.0.1:") != 3 {
		t.Fatalf("the command saw KAFKA_BOOTSTRAP=%q", out)
	}
	waitGone(t, "after the command failed")
}
