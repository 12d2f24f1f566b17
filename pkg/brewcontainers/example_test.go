package brewcontainers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewcontainers"
)

// A service's test that needs Kafka and nothing but Docker: start the
// cluster, point the service's client at it, remove the cluster at the end.
// (Lecture 01's README walks through it.)
func TestOrderServiceAgainstKafka(t *testing.T) {
	if testing.Short() || !dockerAnswers() {
		t.Skip("needs a Docker engine (and not -short)")
	}
	ctx := context.Background()
	c, err := brewcontainers.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Terminate(context.Background()) })

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// ... create a topic, run the service, assert on what it wrote.
}
