package witness_test

import (
	"context"
	"testing"
	"time"

	"github.com/brew-course/kafka/lectures/15-operations/witness"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// On a healthy cluster the witness reads back every order it wrote, once.
func TestWitnessOnAHealthyCluster(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "brew.test.witness.", 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := witness.Start(ctx, env.Config, topic, 200)
	if err != nil {
		t.Fatal(err)
	}
	brewtest.Eventually(t, 20*time.Second, "the witness to have 200 orders acknowledged", func() (bool, string) {
		r := w.Now()
		return r.Acked >= 200, r.String()
	})
	r := w.Stop(20 * time.Second)
	t.Log(r)
	if !r.OK() || r.Acked < 200 || r.Read != r.Acked || r.Failed != 0 || r.Sent != r.Acked {
		t.Fatalf("a healthy cluster: %s", r)
	}
}
