package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Orders that other lectures wrote, and no kitchen run yet: verify says so
// and names the target that starts a kitchen, instead of counting every
// order missing.
func TestNoKitchenYet(t *testing.T) {
	env := brewtest.Sim(t)
	in := env.FreshTopic(t, "verify-orders", 3)
	out := env.FreshTopic(t, "verify-kitchen", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := env.Client(t)
	var recs []*kgo.Record
	for range 50 {
		recs = append(recs, &kgo.Record{Topic: in, Value: []byte("order")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-in", in, "-out", out)
	want := "verify: no kitchen has cooked yet: " + out + " has no kitchen events for the 50 orders in " + in
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "`make kitchen`") || strings.Count(stderr, "\n") != 1 || stdout != "" {
		t.Fatalf("exit %d, want 1 and one line starting %q and naming `make kitchen`\nstderr:\n%s\nstdout:\n%s", code, want, stderr, stdout)
	}
}
