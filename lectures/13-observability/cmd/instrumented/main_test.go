package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// `make instrumented` prints what the README shows: every order placed is
// cooked, none failed, kprom counted each as one record produced and at
// least one fetched, and nothing is left buffered at the end.
func TestInstrumentedReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic, drop, err := brewkit.FreshTopic(ctx, env.Admin(t), brewkit.Fresh{Prefix: "brew.obs.orders.", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) })

	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", topic, "-group", topic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	values := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && strings.HasPrefix(f[0], "brew_") {
			values[f[0]] = f[2]
		}
	}
	placed := values["brew_orders_placed_total"]
	for _, name := range []string{"brew_orders_cooked_total", "brew_produce_records_total"} {
		if values[name] != placed {
			t.Errorf("%s = %s, want the %s placed", name, values[name], placed)
		}
	}
	for _, name := range []string{"brew_produce_errors_total", "brew_buffered_produce_records_total", "brew_buffered_fetch_records_total", "brew_connect_errors_total"} {
		if values[name] != "0" {
			t.Errorf("%s = %s, want 0", name, values[name])
		}
	}
	out = strings.ReplaceAll(out, topic, "brew.obs.kitchen")
	out = strings.Replace(out, "on brew.obs.kitchen for", "on brew.obs.orders for", 1)
	brewtest.MatchesReadme(t, "../../README.md", "instrumented", out)
	brewtest.MatchesReadme(t, "../../README.en.md", "instrumented", out)
}
