// Package secure is how lecture 12's programs reach the cluster twice: as
// the course's operator, a super user, on the plaintext listeners (User:ANONYMOUS),
// and as a partner or a contractor with nothing but its own login, on the
// secured listeners every real stand runs beside them: SASL_SSL with a
// SCRAM-SHA-512 password on 127.0.0.1:19192-19194, and mutual TLS with a
// client certificate on 127.0.0.1:19292-19294 (see pkg/brewkit/stand/tls.go).
package secure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/certs"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Mechanism is the SASL mechanism the SECURE listeners take.
const Mechanism = "SCRAM-SHA-512"

// Cluster is the cluster as lecture 12 reaches it.
type Cluster struct {
	// Admin is a super user's connection: on a stand, the plaintext
	// listeners (KAFKA_BOOTSTRAP), whose principal User:ANONYMOUS may do
	// anything.
	Admin brewkit.Config
	SASL  []string // the SASL_SSL listeners, one per node
	MTLS  []string // the mutual-TLS listeners; none on the simulation
	// TLS are the course CA's files (CA to trust, its key to issue client
	// certificates); zero on the simulation, whose SASL runs without TLS.
	TLS stand.TLS
}

// ErrNoSecuredListeners says the cluster has no secured listeners to log in on.
var ErrNoSecuredListeners = errors.New("the secured listeners run on a real stand only (the embedded one serves one plaintext listener per node): run `make down` and `make up STAND=native` (or STAND=docker)")

// Find is the course stand's cluster: admin (from KAFKA_BOOTSTRAP) and the
// secured listeners of the real stand that is up.
func Find(ctx context.Context, admin brewkit.Config) (Cluster, error) {
	cl, err := brewkit.NewClient(admin)
	if err != nil {
		return Cluster{}, err
	}
	defer cl.Close()
	if err := brewkit.Ping(ctx, admin, cl); err != nil {
		return Cluster{}, err
	}
	if sim, err := brewkit.IsSimulated(ctx, cl); err != nil {
		return Cluster{}, err
	} else if sim {
		return Cluster{}, ErrNoSecuredListeners
	}
	// The operator must be a super user: listing SCRAM users takes
	// DESCRIBE on the cluster, which an ordinary user lacks.
	if _, err := kadm.NewClient(cl).DescribeUserSCRAMs(ctx); err != nil {
		return Cluster{}, fmt.Errorf("the operator's connection (%s) may not manage the cluster: %w", admin.Bootstrap(), err)
	}
	s, err := stand.Find()
	if err != nil {
		return Cluster{}, err
	}
	t := s.TLSFiles()
	if _, err := os.Stat(t.CA); err != nil {
		return Cluster{}, fmt.Errorf("no course CA in %s: %w", t.Dir, ErrNoSecuredListeners)
	}
	c := Cluster{Admin: admin, TLS: t}
	for _, n := range stand.Nodes {
		c.SASL = append(c.SASL, fmt.Sprintf("127.0.0.1:%d", stand.SecurePort(n)))
		c.MTLS = append(c.MTLS, fmt.Sprintf("127.0.0.1:%d", stand.MTLSPort(n)))
	}
	return c, nil
}

// Simulated is the cluster of a simulation whose every node wants a SASL
// login (brewkit/sim with Login): admin is its super user, and the users log
// in on the same addresses, without TLS.
func Simulated(admin brewkit.Config) Cluster {
	return Cluster{Admin: admin, SASL: admin.Brokers}
}

// Simulation reports whether c is a simulation's.
func (c Cluster) Simulation() bool { return c.TLS.CA == "" }

// Password is user's connection on the SASL_SSL listeners: SCRAM-SHA-512
// with password, trusting the course CA.
func (c Cluster) Password(user, password string) (brewkit.Config, error) {
	cfg := brewkit.Default()
	cfg.Timeout = c.Admin.Timeout
	cfg.Brokers = c.SASL
	cfg.SASL, cfg.User, cfg.Pass = Mechanism, user, password
	if c.Simulation() {
		cfg.SASL = c.Admin.SASL // the simulation's own mechanism
		return cfg, nil
	}
	tc, err := brewkit.TLSFiles(c.TLS.CA, "", "")
	if err != nil {
		return brewkit.Config{}, err
	}
	cfg.TLS, cfg.TLSConfig = true, tc
	return cfg, nil
}

// Certificate is the connection on the mutual-TLS listeners of whoever
// holds the certificate certFile and its key keyFile (PEM): the principal is
// the certificate's CN.
func (c Cluster) Certificate(certFile, keyFile string) (brewkit.Config, error) {
	if c.Simulation() {
		return brewkit.Config{}, ErrNoSecuredListeners
	}
	tc, err := brewkit.TLSFiles(c.TLS.CA, certFile, keyFile)
	if err != nil {
		return brewkit.Config{}, err
	}
	cfg := brewkit.Default()
	cfg.Timeout = c.Admin.Timeout
	cfg.Brokers = c.MTLS
	cfg.TLS, cfg.TLSConfig = true, tc
	return cfg, nil
}

// Issue has the course CA sign a client certificate for cn, valid from
// notBefore to notAfter (zero: an hour ago, a year on), and writes it and its
// key to .stand/tls/clients/CN.pem and CN-key.pem, which it returns.
func (c Cluster) Issue(cn string, notBefore, notAfter time.Time) (certFile, keyFile string, err error) {
	ca, err := c.TLS.Authority()
	if err != nil {
		return "", "", err
	}
	leaf, err := ca.Issue(certs.Request{CommonName: cn, Client: true, NotBefore: notBefore, NotAfter: notAfter})
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(c.TLS.Dir, "clients")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, cn+".pem"), filepath.Join(dir, cn+"-key.pem")
	return certFile, keyFile, leaf.Save(certFile, keyFile)
}
