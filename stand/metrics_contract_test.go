package stand_test

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The nodes' metrics for Prometheus (lecture 13), as far as they can be
// checked without a cluster: the JMX exporter's configuration turns exactly
// the contracted MBeans into exactly the contracted series.

// A metricSeries is one series of the metrics contract: lecture 13's alert
// rules use these names, so they change only with those rules.
type metricSeries struct {
	Name   string
	Labels map[string]string // beyond those Prometheus adds (job, instance, node)
	Type   string            // gauge or counter, as the exposition's TYPE says
	MBean  string            // the MBean, as Kafka 4.4.0 registers it
	Attr   string            // its attribute read
}

// metricsRequests are the requests whose latency the nodes export.
var metricsRequests = []string{"Produce", "Fetch", "FetchConsumer", "FetchFollower", "Metadata"}

func metricsContract() []metricSeries {
	rm := "kafka.server:type=ReplicaManager,name="
	kc := "kafka.controller:type=KafkaController,name="
	bt := "kafka.server:type=BrokerTopicMetrics,name="
	c := []metricSeries{
		{"kafka_server_replicamanager_underreplicatedpartitions", nil, "gauge", rm + "UnderReplicatedPartitions", "Value"},
		{"kafka_server_replicamanager_partitioncount", nil, "gauge", rm + "PartitionCount", "Value"},
		{"kafka_server_replicamanager_leadercount", nil, "gauge", rm + "LeaderCount", "Value"},
		{"kafka_server_replicamanager_isrshrinks_total", nil, "counter", rm + "IsrShrinksPerSec", "Count"},
		{"kafka_server_replicamanager_isrexpands_total", nil, "counter", rm + "IsrExpandsPerSec", "Count"},
		{"kafka_controller_kafkacontroller_activecontrollercount", nil, "gauge", kc + "ActiveControllerCount", "Value"},
		{"kafka_controller_kafkacontroller_offlinepartitionscount", nil, "gauge", kc + "OfflinePartitionsCount", "Value"},
		{"kafka_controller_kafkacontroller_globalpartitioncount", nil, "gauge", kc + "GlobalPartitionCount", "Value"},
		{"kafka_server_brokertopicmetrics_messagesin_total", nil, "counter", bt + "MessagesInPerSec", "Count"},
		{"kafka_server_brokertopicmetrics_bytesin_total", nil, "counter", bt + "BytesInPerSec", "Count"},
	}
	for _, r := range metricsRequests {
		for q, attr := range map[string]string{"0.50": "50thPercentile", "0.99": "99thPercentile"} {
			c = append(c, metricSeries{"kafka_network_requestmetrics_totaltimems", map[string]string{"request": r, "quantile": q}, "gauge",
				"kafka.network:type=RequestMetrics,name=TotalTimeMs,request=" + r, attr})
		}
	}
	return c
}

// key names a series with its labels, sorted: name{k="v",...}.
func (m metricSeries) key() string { return seriesKey(m.Name, m.Labels) }

func seriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kv = append(kv, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(kv, ",") + "}"
}

type exporterConfig struct {
	LowercaseOutputName       bool     `yaml:"lowercaseOutputName"`
	LowercaseOutputLabelNames bool     `yaml:"lowercaseOutputLabelNames"`
	IncludeObjectNames        []string `yaml:"includeObjectNames"`
	Rules                     []struct {
		Pattern string            `yaml:"pattern"`
		Name    string            `yaml:"name"`
		Type    string            `yaml:"type"`
		Labels  map[string]string `yaml:"labels"`
	} `yaml:"rules"`
}

func loadExporterConfig(t *testing.T) exporterConfig {
	t.Helper()
	b, err := os.ReadFile("metrics/jmx-exporter.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c exporterConfig
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true) // a misspelt key would be ignored by the exporter too
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("metrics/jmx-exporter.yml: %v", err)
	}
	return c
}

// exporterInput is what the exporter matches a rule's pattern against:
// domain<key=value, ...><>Attribute: value, the keys in the MBean's order.
func exporterInput(mbean, attr string) string {
	domain, keys, _ := strings.Cut(mbean, ":")
	return domain + "<" + strings.ReplaceAll(keys, ",", ", ") + "><>" + attr + ": 1.0"
}

var ruleRef = regexp.MustCompile(`\$(\d+)`)

// applyRules is the exporter's rule matching: the first rule whose pattern
// matches anywhere in the input names the series, with $N from its groups.
func (c exporterConfig) applyRules(t *testing.T, input string) (name string, labels map[string]string, typ string, ok bool) {
	t.Helper()
	for _, r := range c.Rules {
		re, err := regexp.Compile("^.*(?:" + r.Pattern + ").*$")
		if err != nil {
			t.Fatalf("rule %q: %v", r.Pattern, err)
		}
		m := re.FindStringSubmatchIndex(input)
		if m == nil {
			continue
		}
		expand := func(tmpl string) string {
			return string(re.ExpandString(nil, ruleRef.ReplaceAllString(tmpl, "$${$1}"), input, m))
		}
		name = expand(r.Name)
		if c.LowercaseOutputName {
			name = strings.ToLower(name)
		}
		labels = map[string]string{}
		for k, v := range r.Labels {
			if c.LowercaseOutputLabelNames {
				k = strings.ToLower(k)
			}
			labels[k] = expand(v)
		}
		return name, labels, strings.ToLower(r.Type), true
	}
	return "", nil, "", false
}

// TestExporterConfigNamesTheMetricsContract runs the exporter's rules on each
// contracted MBean attribute: each gives its series (name, labels, type),
// every MBean is read, and nothing beyond the contract is.
func TestExporterConfigNamesTheMetricsContract(t *testing.T) {
	c := loadExporterConfig(t)
	if !c.LowercaseOutputName || !c.LowercaseOutputLabelNames {
		t.Errorf("lowercaseOutputName and lowercaseOutputLabelNames: the contract's names are lower case")
	}
	beans := map[string]bool{}
	for _, m := range metricsContract() {
		beans[m.MBean] = true
		if !slices.Contains(c.IncludeObjectNames, m.MBean) {
			t.Errorf("%s: includeObjectNames lacks %s, so the exporter never reads it", m.key(), m.MBean)
		}
		name, labels, typ, ok := c.applyRules(t, exporterInput(m.MBean, m.Attr))
		switch {
		case !ok:
			t.Errorf("%s: no rule matches %s", m.key(), exporterInput(m.MBean, m.Attr))
		case seriesKey(name, labels) != m.key():
			t.Errorf("%s %s gives %s, want %s", m.MBean, m.Attr, seriesKey(name, labels), m.key())
		case typ != m.Type:
			t.Errorf("%s: type %s, want %s", m.key(), typ, m.Type)
		}
	}
	for _, b := range c.IncludeObjectNames {
		if !beans[b] {
			t.Errorf("includeObjectNames reads %s, which no series of the contract needs", b)
		}
	}
	// The attributes beside the contracted ones are left out: a meter's
	// rates, a histogram's other percentiles, other requests' latency.
	for _, input := range []string{
		exporterInput("kafka.server:type=ReplicaManager,name=IsrShrinksPerSec", "OneMinuteRate"),
		exporterInput("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce", "999thPercentile"),
		exporterInput("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce", "Mean"),
		exporterInput("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=ApiVersions", "99thPercentile"),
		exporterInput("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=brew.orders.v1", "Count"),
	} {
		if name, labels, _, ok := c.applyRules(t, input); ok {
			t.Errorf("%s is exported as %s", input, seriesKey(name, labels))
		}
	}
}

// TestComposeNodesServeMetrics: each docker node loads the agent `make up`
// fetched (the release stand.JMXExporterVersion names) with the repository's
// config, both mounted, so the official image needs nothing of its own; its
// metrics port is published on 127.0.0.1 only, as every other port.
func TestComposeNodesServeMetrics(t *testing.T) {
	c := loadCompose(t)
	agent := "-javaagent:/opt/brew/agent/jmx_prometheus_javaagent-" + stand.JMXExporterVersion + ".jar=7071:/etc/brew/metrics/jmx-exporter.yml"
	for n := 1; n <= 3; n++ {
		name := fmt.Sprintf("kafka-%d", n)
		s := c.Services[name]
		if got := s.Environment["KAFKA_OPTS"]; got != agent {
			t.Errorf("%s KAFKA_OPTS %q, want %q", name, got, agent)
		}
		for _, v := range []string{"../.stand/metrics:/opt/brew/agent:ro", "./metrics:/etc/brew/metrics:ro"} {
			if !slices.Contains(s.Volumes, any(v)) {
				t.Errorf("%s does not mount %s", name, v)
			}
		}
		var metrics []string
		for _, p := range s.Ports {
			if strings.HasSuffix(p, ":7071") || strings.Contains(p, fmt.Sprint(stand.MetricsPort(n))) {
				metrics = append(metrics, p)
			}
		}
		if want := fmt.Sprintf("127.0.0.1:%d:7071", stand.MetricsPort(n)); !slices.Equal(metrics, []string{want}) {
			t.Errorf("%s publishes its metrics as %v, want [%s]", name, metrics, want)
		}
	}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %s beyond loopback", name, p)
			}
		}
	}
	// The containers of pkg/brewcontainers share x-kafka-env and mount no agent.
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Env map[string]string `yaml:"x-kafka-env"`
	}
	if err := yaml.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.Env["KAFKA_OPTS"]; ok {
		t.Errorf("x-kafka-env sets KAFKA_OPTS: pkg/brewcontainers' nodes would load an agent they do not mount")
	}
}
