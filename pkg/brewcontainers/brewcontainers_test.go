package brewcontainers

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The containers get exactly the docker stand's settings: compare Settings
// with the compose file's shared environment (x-kafka-env).
func TestSettingsAreTheComposeFiles(t *testing.T) {
	b, err := os.ReadFile("../../stand/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Env map[string]string `yaml:"x-kafka-env"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Env) == 0 {
		t.Fatal("no x-kafka-env in stand/docker-compose.yml")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		want, ok := withoutSecured(k, c.Env[k])
		if !ok {
			continue
		}
		if Settings[k] != want {
			t.Errorf("%s: compose %q, brewcontainers %q", k, want, Settings[k])
		}
	}
	for k := range Settings {
		if _, ok := c.Env[k]; !ok {
			t.Errorf("%s is set here but not in the compose file", k)
		}
	}
}

// withoutSecured is the compose setting k without lecture 12's secured
// listeners, which the containers do not have (no key stores are mounted:
// the containers tier runs the smoke tests, none of which logs in), and
// false for a setting that exists only for them.
func withoutSecured(k, v string) (string, bool) {
	switch {
	case k == "KAFKA_AUTHORIZER_CLASS_NAME", k == "KAFKA_SUPER_USERS",
		strings.HasPrefix(k, "KAFKA_SSL_"), strings.HasPrefix(k, "KAFKA_LISTENER_NAME_"):
		return "", false
	case k == "KAFKA_LISTENERS", k == "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":
		var kept []string
		for _, l := range strings.Split(v, ",") {
			if !strings.HasPrefix(l, "SECURE:") && !strings.HasPrefix(l, "MTLS:") {
				kept = append(kept, l)
			}
		}
		return strings.Join(kept, ","), true
	}
	return v, true
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 3 || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Fatalf("ports %v", ports)
	}
}

func TestImageFollowsTheEnvironment(t *testing.T) {
	t.Setenv("BREW_KAFKA_IMAGE", "")
	if got := Image(); got != "apache/kafka:4.4.0" {
		t.Errorf("default image %q", got)
	}
	t.Setenv("BREW_KAFKA_IMAGE", "brew/kafka-standin:4.4.0")
	if got := Image(); got != "brew/kafka-standin:4.4.0" {
		t.Errorf("image %q", got)
	}
}
