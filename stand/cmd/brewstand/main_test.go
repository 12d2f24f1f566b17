package main

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The usage text and the verbs are one list: each verb is documented, and
// each documented verb runs.
func TestUsageNamesEveryVerb(t *testing.T) {
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)\b`).FindAllStringSubmatch(usage, -1) {
		documented[m[1]] = true
	}
	for v := range verbs {
		if !documented[v] {
			t.Errorf("verb %q is not in the usage text", v)
		}
	}
	for v := range documented {
		if _, ok := verbs[v]; !ok {
			t.Errorf("the usage text names %q, which is no verb", v)
		}
	}
	for _, sub := range []string{"services up", "services down", "services status", "services logs"} {
		if !strings.Contains(usage, "  "+sub) {
			t.Errorf("the usage text lacks %q", sub)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("BREW_ROOT", t.TempDir())
	ctx := context.Background()
	var out strings.Builder
	for _, args := range [][]string{nil, {"frobnicate"}, {"services"}, {"services", "restart"}, {"reset-lecture"}, {"tool"}, {"up", "-bogus"}} {
		if err := run(ctx, args, &out); !errors.Is(err, errUsage) {
			t.Errorf("brewstand %v: got %v, want the usage", args, err)
		}
	}
	if err := run(ctx, []string{"services", "up"}, &out); err == nil || !strings.Contains(err.Error(), "name the services to start") {
		t.Errorf("services up with no name: %v", err)
	}
	if err := run(ctx, []string{"services", "up", "mysql"}, &out); err == nil || !strings.Contains(err.Error(), `unknown service "mysql"`) {
		t.Errorf("services up mysql: %v", err)
	}
	if err := run(ctx, []string{"stop-node", "7"}, &out); err == nil || !strings.Contains(err.Error(), "the nodes are 1, 2 and 3") {
		t.Errorf("stop-node 7: %v", err)
	}
}

func TestVersionAndServicesStatusOnAnEmptyCheckout(t *testing.T) {
	t.Setenv("BREW_ROOT", t.TempDir())
	var out strings.Builder
	if err := run(context.Background(), []string{"version"}, &out); err != nil || out.String() != stand.KafkaVersion+"\n" {
		t.Errorf("version: %q %v", out.String(), err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"services", "status"}, &out); err != nil || !strings.Contains(out.String(), "no service runs or has state") {
		t.Errorf("services status: %q %v", out.String(), err)
	}
	names := []string{}
	for _, svc := range stand.Services() {
		names = append(names, svc.Name)
		if !strings.Contains(usage, svc.Name+" (") {
			t.Errorf("the usage text does not present the service %s", svc.Name)
		}
	}
	if !slices.Equal(names, []string{"postgres", "prometheus", "connect"}) {
		t.Errorf("services %v", names)
	}
}
