// Package stand_test holds the stands' files to the cluster contract of
// DESIGN.md: the docker compose file (which cannot run on a machine without a
// Docker engine) and the native node configs.
package stand_test

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// contract is what every stand's node configuration must say.
var contract = map[string]string{
	"process.roles":                            "broker,controller",
	"default.replication.factor":               "3",
	"min.insync.replicas":                      "2",
	"auto.create.topics.enable":                "false",
	"group.initial.rebalance.delay.ms":         "0",
	"offsets.topic.replication.factor":         "3",
	"transaction.state.log.replication.factor": "3",
	"transaction.state.log.min.isr":            "2",
}

// Settings both stands share beyond the contract, so a lecture behaves alike.
var shared = []string{
	"num.partitions", "offsets.topic.num.partitions", "transaction.state.log.num.partitions",
	"log.retention.check.interval.ms", "log.cleaner.backoff.ms", "replica.lag.time.max.ms",
	"group.consumer.min.session.timeout.ms", "group.consumer.session.timeout.ms",
	"group.consumer.min.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms",
}

// The secured listeners' settings (lecture 12), alike on both stands; the
// key store's location differs (a path in the container).
var secured = []string{
	"ssl.keystore.type", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
	"listener.name.secure.sasl.enabled.mechanisms", "listener.name.secure.scram-sha-512.sasl.jaas.config",
	"listener.name.mtls.ssl.client.auth", "ssl.principal.mapping.rules",
	"authorizer.class.name", "super.users",
}

type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []any             `yaml:"volumes"`
		Healthcheck map[string]any    `yaml:"healthcheck"`
		Profiles    []string          `yaml:"profiles"`
		StopGrace   string            `yaml:"stop_grace_period"`
		Networks    map[string]struct {
			Address string `yaml:"ipv4_address"`
		} `yaml:"networks"`
	} `yaml:"services"`
	Name     string `yaml:"name"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet  string `yaml:"subnet"`
				IPRange string `yaml:"ip_range"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
	Volumes map[string]any `yaml:"volumes"`
}

// fixedAddress is node n's address in the compose network (stand/README.md).
func fixedAddress(n int) string { return fmt.Sprintf("10.210.119.1%d", n) }

// Each node keeps one address in the compose network whatever order the
// nodes restart in (TestDockerNodesKeepTheirAddressesAlone shows why), and
// no other service can be handed it: the addresses are in the subnet and
// outside the range the others take theirs from.
func TestComposeNodesHaveFixedAddresses(t *testing.T) {
	c := loadCompose(t)
	cfg := c.Networks["default"].IPAM.Config
	if len(cfg) != 1 {
		t.Fatalf("the default network's ipam config: %+v, want one subnet with an ip_range", cfg)
	}
	subnet, err := netip.ParsePrefix(cfg[0].Subnet)
	if err != nil {
		t.Fatalf("subnet: %v", err)
	}
	others, err := netip.ParsePrefix(cfg[0].IPRange)
	if err != nil {
		t.Fatalf("ip_range: %v", err)
	}
	for n := 1; n <= 4; n++ {
		name := fmt.Sprintf("kafka-%d", n)
		addr, err := netip.ParseAddr(c.Services[name].Networks["default"].Address)
		if err != nil {
			t.Errorf("%s has no fixed address: %v", name, err)
			continue
		}
		if want := fixedAddress(n); addr.String() != want {
			t.Errorf("%s is at %s, want %s (stand/README.md)", name, addr, want)
		}
		if !subnet.Contains(addr) || others.Contains(addr) {
			t.Errorf("%s's %s: want it in %s and outside %s", name, addr, subnet, others)
		}
	}
	for name, s := range c.Services {
		if !strings.HasPrefix(name, "kafka-") && s.Networks["default"].Address != "" {
			t.Errorf("%s has a fixed address; only the nodes do", name)
		}
	}
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// envKey turns a Kafka config name into the apache/kafka image's variable.
// envKey is the official image's name for property k: . is _, _ is __ and
// - is ___ (Kafka's KafkaDockerWrapper reads them back).
func envKey(k string) string {
	return "KAFKA_" + strings.ToUpper(strings.NewReplacer("_", "__", "-", "___", ".", "_").Replace(k))
}

func loadProperties(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		props[k] = v
	}
	return props
}

func TestComposeHonoursTheContract(t *testing.T) {
	c := loadCompose(t)
	native := loadProperties(t, "native/node1.properties")
	for n := 1; n <= 3; n++ {
		name := fmt.Sprintf("kafka-%d", n)
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		env := s.Environment
		check := func(what, got, want string) {
			t.Helper()
			if got != want {
				t.Errorf("%s %s: got %q, want %q", name, what, got, want)
			}
		}
		// The official image unless BREW_KAFKA_IMAGE names a stand-in.
		check("image", s.Image, "${BREW_KAFKA_IMAGE:-"+stand.OfficialImage+"}")
		check("ports", strings.Join(s.Ports, ","), fmt.Sprintf("127.0.0.1:%d:9094,127.0.0.1:%d:9095,127.0.0.1:%d:9096,127.0.0.1:%d:7071", 19091+n, 19191+n, 19291+n, 17070+n))
		check("node id", env["KAFKA_NODE_ID"], fmt.Sprint(n))
		check("cluster id", env["CLUSTER_ID"], brewkit.ClusterID)
		check("voters", env["KAFKA_CONTROLLER_QUORUM_VOTERS"], "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093")
		check("listeners", env["KAFKA_LISTENERS"], "INTERNAL://:9092,CONTROLLER://:9093,EXTERNAL://:9094,SECURE://:9095,MTLS://:9096")
		check("advertised", env["KAFKA_ADVERTISED_LISTENERS"], fmt.Sprintf("INTERNAL://kafka-%d:9092,EXTERNAL://127.0.0.1:%d,SECURE://127.0.0.1:%d,MTLS://127.0.0.1:%d", n, 19091+n, 19191+n, 19291+n))
		check("protocols", env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"], "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT,SECURE:SASL_SSL,MTLS:SSL")
		check("volumes", fmt.Sprint(s.Volumes), fmt.Sprintf("[kafka-%d-data:/var/lib/kafka/data ../.stand/tls:/etc/brew/tls:ro ../.stand/metrics:/opt/brew/agent:ro ./metrics:/etc/brew/metrics:ro map[target:/etc/kafka/secrets type:tmpfs] map[target:/mnt/shared/config type:tmpfs]]", n))
		check("key store", env["KAFKA_SSL_KEYSTORE_LOCATION"], fmt.Sprintf("/etc/brew/tls/node%d.p12", n))
		check("trust store", env["KAFKA_SSL_TRUSTSTORE_LOCATION"], "/etc/brew/tls/ca.pem")
		// The official image's configure script asks for JKS credential
		// files when an advertised listener's name ends in SSL: ours do not.
		if strings.Contains(env["KAFKA_ADVERTISED_LISTENERS"], "SSL://") {
			t.Errorf("%s: a listener named ...SSL trips the official image's SSL checks", name)
		}
		for _, k := range secured {
			// Compose turns $$ into $.
			check(k+" (as native)", strings.ReplaceAll(env[envKey(k)], "$$", "$"), native[k])
		}
		for k, want := range contract {
			check(k, env[envKey(k)], want)
		}
		for _, k := range shared {
			check(k+" (as native)", env[envKey(k)], native[k])
		}
		// A light healthcheck: no JVM (a Kafka tool) every few seconds.
		test := fmt.Sprint(s.Healthcheck["test"])
		if s.Healthcheck["test"] == nil || strings.Contains(test, "kafka-") || strings.Contains(test, "java") {
			t.Errorf("%s healthcheck %s: want a check that starts no JVM", name, test)
		}
		// SIGTERM's controlled shutdown gets as long as on the native stand.
		check("stop_grace_period", s.StopGrace, "60s")
		if _, ok := c.Volumes[name+"-data"]; !ok {
			t.Errorf("volume %s-data is not declared", name)
		}
	}
	ui, ok := c.Services["kafka-ui"]
	if !ok || len(ui.Profiles) != 1 || ui.Profiles[0] != "ui" {
		t.Errorf("the web UI must be behind the ui profile, got %+v", ui.Profiles)
	}
	// The maintained fork, at a pinned version (not latest or main).
	if !strings.HasPrefix(ui.Image, "kafbat/kafka-ui:v") {
		t.Errorf("kafka-ui image %q: want kafbat/kafka-ui at a pinned vX.Y.Z", ui.Image)
	}
	if c.Name != "brew" {
		t.Errorf("compose project name %q, want brew (the stand also passes -p brew)", c.Name)
	}
}

func TestNativeConfigsHonourTheContract(t *testing.T) {
	for n := 1; n <= 3; n++ {
		path := fmt.Sprintf("native/node%d.properties", n)
		p := loadProperties(t, path)
		check := func(k, want string) {
			t.Helper()
			if p[k] != want {
				t.Errorf("%s %s: got %q, want %q", path, k, p[k], want)
			}
		}
		check("node.id", fmt.Sprint(n))
		check("controller.quorum.voters", "1@127.0.0.1:39092,2@127.0.0.1:39093,3@127.0.0.1:39094")
		check("listeners", fmt.Sprintf("CLIENT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d,SECURE://127.0.0.1:%d,MTLS://127.0.0.1:%d", 19091+n, 29091+n, 39091+n, 19191+n, 19291+n))
		check("advertised.listeners", fmt.Sprintf("CLIENT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d,SECURE://127.0.0.1:%d,MTLS://127.0.0.1:%d", 19091+n, 29091+n, 19191+n, 19291+n))
		check("listener.security.protocol.map", "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SECURE:SASL_SSL,MTLS:SSL")
		check("ssl.keystore.location", fmt.Sprintf(".stand/tls/node%d.p12", n))
		check("ssl.truststore.location", ".stand/tls/ca.pem")
		check("ssl.keystore.password", stand.KeyStorePassword)
		check("super.users", "User:ANONYMOUS;User:"+stand.AdminUser)
		check("log.dirs", fmt.Sprintf(".stand/native/node%d/data", n))
		for k, want := range contract {
			check(k, want)
		}
		for k, v := range p {
			if strings.Contains(v, "0.0.0.0") {
				t.Errorf("%s %s listens beyond loopback: %s", path, k, v)
			}
		}
	}
}

// Node 4 (lecture 15) is a broker only on 19096, finds the same three
// controllers, and takes every setting of the course contract and the
// authorizer from node 1, so that a partition moved onto it behaves the same.
func TestNativeFourthNodeIsABrokerOfTheSameCluster(t *testing.T) {
	one := loadProperties(t, "native/node1.properties")
	four := loadProperties(t, "native/node4.properties")
	for k, want := range map[string]string{
		"process.roles":        "broker",
		"node.id":              "4",
		"listeners":            "CLIENT://127.0.0.1:19096,INTERNAL://127.0.0.1:29096",
		"advertised.listeners": "CLIENT://127.0.0.1:19096,INTERNAL://127.0.0.1:29096",
		"log.dirs":             ".stand/native/node4/data",
	} {
		if four[k] != want {
			t.Errorf("node4.properties %s: got %q, want %q", k, four[k], want)
		}
	}
	if got := stand.ClientPort(stand.Fourth); got != 19096 {
		t.Errorf("ClientPort(4) = %d, want 19096 (DESIGN.md)", got)
	}
	for k, v := range one {
		if strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "listener") || strings.Contains(k, "listeners") ||
			k == "process.roles" || k == "node.id" || k == "log.dirs" {
			continue
		}
		if four[k] != v {
			t.Errorf("node4.properties %s: got %q, node 1 has %q", k, four[k], v)
		}
	}
}
