package brewcontainers_test

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// dockerAnswers reports whether a Docker engine answers; under
// BREW_REQUIRE_DOCKER=1 (the docker tiers) one must.
func dockerAnswers() bool {
	if os.Getenv("BREW_REQUIRE_DOCKER") == "1" {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "info").Run() == nil
}
