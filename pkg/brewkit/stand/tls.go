package stand

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/certs"
)

// The secured listeners of every real stand (lecture 12), beside the
// plaintext client listeners, which keep every right:
//
//   - SECURE, SASL_SSL on 127.0.0.1:19192-19194: a SCRAM-SHA-512 password
//     over TLS;
//   - MTLS, SSL on 127.0.0.1:19292-19294: a client certificate the course
//     CA signed, required; its CN is the principal (CN=partner: User:partner).
//
// Kafka's StandardAuthorizer is on. The plaintext listeners' principal,
// User:ANONYMOUS, and the course's admin User:brew are super users; every
// other principal has only what ACLs grant it.

// SecurePort is node n's SASL_SSL port, MTLSPort its mutual-TLS port.
func SecurePort(n int) int { return Port(19191 + n) }

// MTLSPort is node n's mutual-TLS (SSL, client certificate required) port.
func MTLSPort(n int) int { return Port(19291 + n) }

// The course's admin on the secured listeners: a super user, with this
// SCRAM-SHA-512 password on SECURE and the client certificate brew.pem on
// MTLS. A local stand's, written here on purpose.
const (
	AdminUser     = "brew"
	AdminPassword = "brew-secret"
	// KeyStorePassword protects the nodes' PKCS #12 key stores
	// (stand/native/nodeN.properties and the compose file name it too).
	KeyStorePassword = "brew-course"
)

// TLS names the files of the course CA and what it signed, in .stand/tls.
type TLS struct {
	Dir             string
	CA, CAKey       string // ca.pem: what clients and nodes trust; ca-key.pem signs
	Admin, AdminKey string // brew.pem, brew-key.pem: User:brew's client certificate
	nodeStores      []string
}

// TLSFiles are this checkout's certificate files (EnsureTLS makes them).
func (s *Stand) TLSFiles() TLS {
	dir := s.state("tls")
	t := TLS{Dir: dir, CA: filepath.Join(dir, "ca.pem"), CAKey: filepath.Join(dir, "ca-key.pem"),
		Admin: filepath.Join(dir, "brew.pem"), AdminKey: filepath.Join(dir, "brew-key.pem")}
	for _, n := range Nodes {
		t.nodeStores = append(t.nodeStores, t.NodeStore(n))
	}
	return t
}

// NodeStore is node n's PKCS #12 key store: its server certificate, valid for
// 127.0.0.1, localhost and kafka-n (its docker host name).
func (t TLS) NodeStore(n int) string { return filepath.Join(t.Dir, fmt.Sprintf("node%d.p12", n)) }

// Authority loads the course CA.
func (t TLS) Authority() (*certs.Authority, error) {
	a, err := certs.LoadAuthority(t.CA, t.CAKey)
	if err != nil {
		return nil, fmt.Errorf("the course CA in %s (run `make up` to make it): %w", t.Dir, err)
	}
	return a, nil
}

// EnsureTLS makes what is missing of the course CA, the nodes' key stores
// and the admin's client certificate. A CA that is there and fresh is kept
// (the nodes that run trust it); one that is not is made again with
// everything it signed.
func (s *Stand) EnsureTLS() error {
	t := s.TLSFiles()
	if err := os.MkdirAll(t.Dir, 0o755); err != nil {
		return err
	}
	ca, err := certs.LoadAuthority(t.CA, t.CAKey)
	if err == nil {
		err = certs.Fresh(ca.Cert)
	}
	if err != nil {
		if ca, err = certs.NewAuthority("Brew course CA", 10*365*24*time.Hour); err != nil {
			return err
		}
		if err := ca.Save(t.CA, t.CAKey); err != nil {
			return fmt.Errorf("writing the course CA to %s: %w", t.Dir, err)
		}
		for _, f := range append([]string{t.Admin, t.AdminKey}, t.nodeStores...) {
			os.Remove(f)
		}
		s.say("stand: made the course CA and the nodes' certificates in %s", rel(s.Root, t.Dir))
	}
	for _, n := range Nodes {
		if isFile(t.NodeStore(n)) {
			continue
		}
		leaf, err := ca.Issue(certs.Request{CommonName: fmt.Sprintf("node%d", n), Server: true,
			Hosts: []string{"127.0.0.1", "localhost", service(n)}, NotAfter: ca.Cert.NotAfter})
		if err != nil {
			return err
		}
		p12, err := leaf.PKCS12(KeyStorePassword)
		if err != nil {
			return err
		}
		// Readable by all: the docker stand's nodes run as another user.
		if err := os.WriteFile(t.NodeStore(n), p12, 0o644); err != nil {
			return err
		}
	}
	if !isFile(t.Admin) || !isFile(t.AdminKey) {
		leaf, err := ca.Issue(certs.Request{CommonName: AdminUser, Client: true, NotAfter: ca.Cert.NotAfter})
		if err != nil {
			return err
		}
		if err := leaf.Save(t.Admin, t.AdminKey); err != nil {
			return err
		}
	}
	return nil
}

// ensureAdmin writes User:brew's SCRAM-SHA-512 password to the cluster,
// every time a stand or a node of it starts. Measured on Kafka 4.4.0 here: a
// broker that restarts refuses every SCRAM login whose credential was written
// before it went down (SASL_AUTHENTICATION_FAILED), though the controllers
// still describe the credential and the other brokers accept it; writing it
// again reaches every broker. So the course's admin is written again after
// each start, and lecture 12's own users after a node's restart need `make
// users` again.
func ensureAdmin(ctx context.Context) error {
	cfg := cluster()
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{
		User: AdminUser, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: AdminPassword,
	}})
	if err == nil {
		if r, ok := res[AdminUser]; ok && r.Err != nil {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("giving %s its SCRAM password: %w", AdminUser, err)
	}
	return nil
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// SecureConfig is the course admin's login on the SECURE listeners
// (SCRAM-SHA-512 over TLS, trusting the course CA).
func (t TLS) SecureConfig() (brewkit.Config, error) {
	tc, err := brewkit.TLSFiles(t.CA, "", "")
	if err != nil {
		return brewkit.Config{}, err
	}
	cfg := brewkit.Default()
	cfg.Brokers = addrs(SecurePort)
	cfg.SASL, cfg.User, cfg.Pass = "SCRAM-SHA-512", AdminUser, AdminPassword
	cfg.TLS, cfg.TLSConfig = true, tc
	return cfg, nil
}

// MTLSConfig is the course admin's client certificate on the MTLS listeners.
func (t TLS) MTLSConfig() (brewkit.Config, error) {
	tc, err := brewkit.TLSFiles(t.CA, t.Admin, t.AdminKey)
	if err != nil {
		return brewkit.Config{}, err
	}
	cfg := brewkit.Default()
	cfg.Brokers = addrs(MTLSPort)
	cfg.TLS, cfg.TLSConfig = true, tc
	return cfg, nil
}

func addrs(port func(int) int) []string {
	var out []string
	for _, n := range Nodes {
		out = append(out, fmt.Sprintf("127.0.0.1:%d", port(n)))
	}
	return out
}

// securedCheck logs in as the course admin on both secured listeners of a
// real stand that is up.
func (s *Stand) securedCheck(ctx context.Context) Check {
	const name = "secured"
	if cur := s.Current(); cur != Native && cur != Docker {
		return Check{name, "ok", "no real stand is up; on one, every node also listens with SASL_SSL on 19192-19194 and mutual TLS on 19292-19294", ""}
	}
	t := s.TLSFiles()
	var failed []string
	for _, l := range []struct {
		what string
		cfg  func() (brewkit.Config, error)
	}{{"SASL_SSL (SCRAM-SHA-512) on 19192-19194", t.SecureConfig}, {"mutual TLS on 19292-19294", t.MTLSConfig}} {
		cfg, err := l.cfg()
		if err == nil {
			err = login(ctx, cfg)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", l.what, err))
		}
	}
	if len(failed) > 0 {
		return Check{name, "FAIL", strings.Join(failed, "; "), "`make down` and `make up` make the certificates in .stand/tls and restart the nodes with them"}
	}
	return Check{name, "ok", fmt.Sprintf("%s logs in with SASL_SSL on 19192-19194 and mutual TLS on 19292-19294 (CA %s)", AdminUser, rel(s.Root, t.CA)), ""}
}

func login(ctx context.Context, cfg brewkit.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	return brewkit.Ping(ctx, cfg, cl)
}
