package stand_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The services beside the cluster, as far as they can be checked without
// running them: the compose services the docker stand would run (no image
// can be pulled where the course is built, so they never ran here), the
// connect pom's defaults, and the course's Prometheus configuration.

type composeService struct {
	Image       string            `yaml:"image"`
	Profiles    []string          `yaml:"profiles"`
	Ports       []string          `yaml:"ports"`
	NetworkMode string            `yaml:"network_mode"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []any             `yaml:"volumes"`
}

func loadComposeServices(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c.Services
}

func TestComposeServicesBesideTheCluster(t *testing.T) {
	compose := loadComposeServices(t)
	for _, svc := range stand.Services() {
		c, ok := compose[svc.Name]
		if !ok {
			t.Errorf("no compose service %s", svc.Name)
			continue
		}
		// Behind its own profile, so `make up` never starts it.
		if !slices.Equal(c.Profiles, []string{svc.Name}) {
			t.Errorf("%s: profiles %v, want [%s]", svc.Name, c.Profiles, svc.Name)
		}
		if c.Image != svc.Image {
			t.Errorf("%s: image %q, the stand pulls %q", svc.Name, c.Image, svc.Image)
		}
		// On 127.0.0.1 and the service's port, as the host process.
		switch {
		case c.NetworkMode == "host":
			if !slices.Contains(c.Command, "--web.listen-address="+svc.Addr()) {
				t.Errorf("%s on the host network: command %v does not listen on %s", svc.Name, c.Command, svc.Addr())
			}
		case len(c.Ports) != 1 || !strings.HasPrefix(c.Ports[0], svc.Addr()+":"):
			t.Errorf("%s: ports %v, want 127.0.0.1:%d published", svc.Name, c.Ports, svc.Port)
		}
	}
	pg := compose["postgres"]
	for _, want := range []string{"wal_level=logical", "max_replication_slots=10", "max_wal_senders=10"} {
		if !slices.Contains(pg.Command, want) {
			t.Errorf("postgres: command %v lacks %s", pg.Command, want)
		}
	}
	if pg.Environment["POSTGRES_HOST_AUTH_METHOD"] != "trust" {
		t.Errorf("postgres: trust, as the host process, so DSNs need no password")
	}
	if !slices.Contains(compose["prometheus"].Volumes, any("./services/prometheus.yml:/etc/prometheus/prometheus.yml:ro")) {
		t.Errorf("prometheus: the course's configuration is not mounted: %v", compose["prometheus"].Volumes)
	}
	env := compose["connect"].Environment
	for k, want := range map[string]string{
		"GROUP_ID": stand.ConnectGroup, "CONFIG_STORAGE_TOPIC": stand.ConnectConfigsTopic,
		"OFFSET_STORAGE_TOPIC": stand.ConnectOffsetsTopic, "STATUS_STORAGE_TOPIC": stand.ConnectStatusesTopic,
		"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "3", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "3",
		"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "3",
		"BOOTSTRAP_SERVERS":                         "kafka-1:9092,kafka-2:9092,kafka-3:9092",
	} {
		if env[k] != want {
			t.Errorf("connect %s: got %q, want %q", k, env[k], want)
		}
	}
}

// The pom's defaults are the releases the stand passes (-Dconnect.version,
// -Ddebezium.version); TestOneKafkaVersion checks Kafka's across the repo.
func TestConnectPomDefaults(t *testing.T) {
	b, err := os.ReadFile("services/connect/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	pom := string(b)
	for tag, want := range map[string]string{"connect.version": stand.ConnectRuntimeVersion, "debezium.version": stand.DebeziumVersion} {
		m := regexp.MustCompile("<" + regexp.QuoteMeta(tag) + ">([^<]*)</").FindStringSubmatch(pom)
		if m == nil || m[1] != want {
			t.Errorf("pom.xml <%s>: got %v, want %s", tag, m, want)
		}
	}
	for _, artifact := range []string{"connect-runtime", "connect-json", "debezium-connector-postgres", "log4j-slf4j-impl"} {
		if !strings.Contains(pom, "<artifactId>"+artifact+"</artifactId>") {
			t.Errorf("pom.xml lacks %s", artifact)
		}
	}
	settings, err := os.ReadFile("services/connect/settings.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(settings), "<mirrorOf>*</mirrorOf>") || !strings.Contains(string(settings), "https://repo.maven.apache.org/maven2") {
		t.Errorf("settings.xml: every repository is to be mirrored to Maven Central")
	}
}

// Prometheus scrapes itself and each node's metrics port.
func TestPrometheusConfigScrapesTheNodes(t *testing.T) {
	b, err := os.ReadFile("services/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	targets := map[string][]string{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets[sc.JobName] = append(targets[sc.JobName], st.Targets...)
		}
	}
	want := []string{}
	for n := 1; n <= 3; n++ {
		want = append(want, "127.0.0.1:"+strconv.Itoa(stand.MetricsPort(n)))
	}
	if !slices.Equal(targets["kafka"], want) {
		t.Errorf("job kafka scrapes %v, want %v", targets["kafka"], want)
	}
	if !slices.Equal(targets["prometheus"], []string{"127.0.0.1:19090"}) {
		t.Errorf("job prometheus scrapes %v, want itself", targets["prometheus"])
	}
	// Lecture 13: its lag exporter and its instrumented services.
	if !slices.Equal(targets["brew-lag"], []string{"127.0.0.1:17080"}) || !slices.Equal(targets["brew-apps"], []string{"127.0.0.1:17081"}) {
		t.Errorf("jobs brew-lag and brew-apps scrape %v and %v, want 127.0.0.1:17080 and :17081", targets["brew-lag"], targets["brew-apps"])
	}
	// Its rules, relative to the config: in the repository, and in the
	// compose service, which mounts them at the same place under /.
	if len(cfg.RuleFiles) != 1 {
		t.Fatalf("rule_files: %v, want lecture 13's one file", cfg.RuleFiles)
	}
	rel := cfg.RuleFiles[0]
	if _, err := os.Stat(filepath.Join("services", rel)); err != nil {
		t.Errorf("rule_files: %v", err)
	}
	inContainer := filepath.Join("/etc/prometheus", rel) // where the config is mounted
	compose := loadComposeServices(t)
	mounted := false
	for _, v := range compose["prometheus"].Volumes {
		src, dst, _ := strings.Cut(strings.TrimSuffix(fmt.Sprint(v), ":ro"), ":")
		if strings.HasPrefix(inContainer, dst+"/") && filepath.Join(src, strings.TrimPrefix(inContainer, dst)) == filepath.Join("..", "lectures", strings.TrimPrefix(inContainer, "/lectures/")) {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("prometheus: the compose service does not mount the rules at %s: %v", inContainer, compose["prometheus"].Volumes)
	}
}
