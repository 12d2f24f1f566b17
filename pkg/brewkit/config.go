package brewkit

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

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
	EnvTLSCA     = "KAFKA_TLS_CA"   // a PEM file of the CAs to trust instead of the system's
	EnvTLSCert   = "KAFKA_TLS_CERT" // a PEM client certificate, for mutual TLS
	EnvTLSKey    = "KAFKA_TLS_KEY"  // its PEM private key
	EnvTimeout   = "KAFKA_TIMEOUT"
)

// defaultTimeout is how long a program waits for Kafka to acknowledge a
// write or serve a read it knows is there before it gives up and says what
// it was waiting for; KAFKA_TIMEOUT sets another bound.
const defaultTimeout = 30 * time.Second

// Config says how to reach a cluster.
type Config struct {
	Brokers []string // host:port seeds
	SASL    string   // "", PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	User    string
	Pass    string
	TLS     bool
	// TLSConfig, when set, is the TLS the client speaks (TLS is then on):
	// the CAs it trusts, its certificate for mutual TLS. FromEnv builds it
	// from KAFKA_TLS_CA, KAFKA_TLS_CERT and KAFKA_TLS_KEY; with TLS alone
	// the client trusts the system's CAs.
	TLSConfig *tls.Config
	// Timeout bounds each wait for Kafka: an acknowledgement, records a
	// reader knows are there (see defaultTimeout).
	Timeout time.Duration
}

// Default is the course cluster with no authentication.
func Default() Config {
	return Config{Brokers: splitList(DefaultBootstrap), Timeout: defaultTimeout}
}

// FromEnv reads KAFKA_BOOTSTRAP, KAFKA_SASL_MECHANISM, KAFKA_USERNAME,
// KAFKA_PASSWORD, KAFKA_TLS (with KAFKA_TLS_CA, KAFKA_TLS_CERT and
// KAFKA_TLS_KEY) and KAFKA_TIMEOUT, defaulting to the course cluster.
func FromEnv() (Config, error) { return configFrom(os.Getenv) }

func configFrom(getenv func(string) string) (Config, error) {
	cfg := Default()
	if v := getenv(EnvBootstrap); strings.TrimSpace(v) != "" {
		cfg.Brokers = splitList(v)
		if len(cfg.Brokers) == 0 {
			return Config{}, fmt.Errorf("%s=%q names no broker: use host:port[,host:port...], for example %s", EnvBootstrap, v, DefaultBootstrap)
		}
	}
	for _, b := range cfg.Brokers {
		if err := checkHostPort(b); err != nil {
			return Config{}, fmt.Errorf("%s: %q is not host:port (%v), for example 127.0.0.1:19092", EnvBootstrap, b, err)
		}
	}
	if v := strings.TrimSpace(getenv(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s=%q: use a positive duration such as 30s or 2m", EnvTimeout, v)
		}
		cfg.Timeout = d
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
	ca, cert, key := getenv(EnvTLSCA), getenv(EnvTLSCert), getenv(EnvTLSKey)
	if ca != "" || cert != "" || key != "" {
		tc, err := TLSFiles(ca, cert, key)
		if err != nil {
			return Config{}, err
		}
		cfg.TLS, cfg.TLSConfig = true, tc
	}
	return cfg, nil
}

// TLSFiles is the TLS of a client that trusts the CAs in the PEM file ca
// (the system's when ca is "") and, when cert and key name PEM files,
// presents that certificate for mutual TLS.
func TLSFiles(ca, cert, key string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTLSCA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s=%s holds no PEM certificate", EnvTLSCA, ca)
		}
		tc.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("mutual TLS needs both %s and %s", EnvTLSCert, EnvTLSKey)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", EnvTLSCert, EnvTLSKey, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// Bound is c.Timeout, or defaultTimeout for a Config that sets none.
func (c Config) Bound() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return defaultTimeout
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
		opts = append(opts, kgo.DialTLSConfig(c.tlsConfig()))
	}
	return opts
}

func (c Config) tlsConfig() *tls.Config {
	if c.TLSConfig != nil {
		return c.TLSConfig.Clone()
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
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

// checkHostPort checks that addr is host:port with a port number.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
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
