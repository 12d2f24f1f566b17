package brewkit

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// DefaultBootstrap is the course cluster: nodes 1, 2 and 3 on loopback.
const DefaultBootstrap = "127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094"

// ClusterID is the fixed cluster id every stand is formatted with.
const ClusterID = "5nnS6DRtQnKwoMjkkVxxug"

// Environment variables that point the programs at another cluster.
const (
	EnvBootstrap = "KAFKA_BOOTSTRAP"
	EnvSASL      = "KAFKA_SASL_MECHANISM"
	EnvUser      = "KAFKA_USERNAME"
	EnvPassword  = "KAFKA_PASSWORD"
	EnvTLS       = "KAFKA_TLS"
)

// Config says how to reach a cluster.
type Config struct {
	Brokers []string // host:port seeds
	SASL    string   // "", PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	User    string
	Pass    string
	TLS     bool
}

// Default is the course cluster with no authentication.
func Default() Config { return Config{Brokers: splitList(DefaultBootstrap)} }

// FromEnv reads KAFKA_BOOTSTRAP, KAFKA_SASL_MECHANISM, KAFKA_USERNAME,
// KAFKA_PASSWORD and KAFKA_TLS, defaulting to the course cluster.
func FromEnv() (Config, error) { return configFrom(os.Getenv) }

func configFrom(getenv func(string) string) (Config, error) {
	cfg := Default()
	if v := getenv(EnvBootstrap); strings.TrimSpace(v) != "" {
		cfg.Brokers = splitList(v)
	}
	for _, b := range cfg.Brokers {
		if !strings.Contains(b, ":") {
			return Config{}, fmt.Errorf("%s: %q is not host:port", EnvBootstrap, b)
		}
	}
	cfg.SASL = strings.ToUpper(strings.TrimSpace(getenv(EnvSASL)))
	cfg.User = getenv(EnvUser)
	cfg.Pass = getenv(EnvPassword)
	switch cfg.SASL {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return Config{}, fmt.Errorf("%s=%q: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", EnvSASL, cfg.SASL)
	}
	if cfg.SASL != "" && cfg.User == "" {
		return Config{}, fmt.Errorf("%s=%s needs %s and %s", EnvSASL, cfg.SASL, EnvUser, EnvPassword)
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvTLS))); v {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		cfg.TLS = true
	default:
		return Config{}, fmt.Errorf("%s=%q: use 1 or 0", EnvTLS, v)
	}
	return cfg, nil
}

// Bootstrap returns the seeds as KAFKA_BOOTSTRAP spells them.
func (c Config) Bootstrap() string { return strings.Join(c.Brokers, ",") }

// Opts are the kgo options that connect to the cluster: seeds, SASL and TLS.
func (c Config) Opts() []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(c.Brokers...)}
	if m := c.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	if c.TLS {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	return opts
}

func (c Config) mechanism() sasl.Mechanism {
	switch c.SASL {
	case "PLAIN":
		return plain.Auth{User: c.User, Pass: c.Pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: c.User, Pass: c.Pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: c.User, Pass: c.Pass}.AsSha512Mechanism()
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
