package tlsprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/certs"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Prepare is the Stand of the course cluster c: node 1's secured listeners,
// the course admin's login and certificate, and the certificates the cases
// present. It makes what is missing: the topic o.Topic (as the operator, on
// the plaintext listeners) and the partner's certificate from the course CA
// in .stand/tls/clients/CN.pem (kept while it is valid); the expired one,
// and the other CA with what it signs, live in memory only.
func Prepare(ctx context.Context, c secure.Cluster, o Options) (Stand, error) {
	if c.Simulation() || len(c.SASL) == 0 || len(c.MTLS) == 0 {
		return Stand{}, secure.ErrNoSecuredListeners
	}
	_, adm, err := brewkit.Connect(ctx, c.Admin)
	if err != nil {
		return Stand{}, err
	}
	defer adm.Close()
	created, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(o.Topic, 1))
	if err != nil {
		return Stand{}, err
	}

	ca, err := c.TLS.Authority()
	if err != nil {
		return Stand{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	s := Stand{Secure: c.SASL[0], MTLS: c.MTLS[0], CA: pool,
		Mechanism: secure.Mechanism, User: stand.AdminUser, Password: stand.AdminPassword}
	if s.Admin, err = tls.LoadX509KeyPair(c.TLS.Admin, c.TLS.AdminKey); err != nil {
		return Stand{}, fmt.Errorf("the course admin's certificate (run `make up` to make it): %w", err)
	}
	for _, t := range created {
		s.Made = append(s.Made, "topic "+t)
	}
	var issued string
	if s.Partner, issued, err = partnerCert(c, ca, o.CN); err != nil {
		return Stand{}, err
	}
	if issued != "" {
		s.Made = append(s.Made, fromHere(issued)+" (CN="+o.CN+", from the course CA)")
	}
	now := time.Now()
	expired, err := ca.Issue(certs.Request{CommonName: o.CN, Client: true,
		NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-24 * time.Hour)})
	if err != nil {
		return Stand{}, err
	}
	s.Expired = Pair(expired)
	if s.Stranger, s.RelayCert, err = Strangers(o.CN); err != nil {
		return Stand{}, err
	}
	return s, nil
}

// Strangers are a client certificate for cn and a server certificate for
// 127.0.0.1 and localhost (CN=relay), both signed by a CA of their own,
// which no node trusts.
func Strangers(cn string) (client, server tls.Certificate, err error) {
	other, err := certs.NewAuthority("Not the course CA", 24*time.Hour)
	if err != nil {
		return client, server, err
	}
	cl, err := other.Issue(certs.Request{CommonName: cn, Client: true})
	if err != nil {
		return client, server, err
	}
	sv, err := other.Issue(certs.Request{CommonName: "relay", Server: true, Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return client, server, err
	}
	return Pair(cl), Pair(sv), nil
}

// Pair is l as crypto/tls takes it.
func Pair(l *certs.Leaf) tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}

// partnerCert is .stand/tls/clients/CN.pem when the course CA signed it and
// it is valid for a day more, else a new one Issue writes there, whose file
// it names.
func partnerCert(c secure.Cluster, ca *certs.Authority, cn string) (_ tls.Certificate, issued string, _ error) {
	dir := filepath.Join(c.TLS.Dir, "clients")
	certFile, keyFile := filepath.Join(dir, cn+".pem"), filepath.Join(dir, cn+"-key.pem")
	if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil &&
			leaf.CheckSignatureFrom(ca.Cert) == nil && certs.Fresh(leaf) == nil && leaf.Subject.CommonName == cn {
			pair.Leaf = leaf
			return pair, "", nil
		}
	}
	// None there, damaged, from another CA or expiring: a new one.
	certFile, keyFile, err := c.Issue(cn, time.Time{}, time.Time{})
	if err != nil {
		return tls.Certificate{}, "", err
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	return pair, certFile, err
}

// fromHere is path relative to the working directory, when it can be.
func fromHere(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil {
		return rel
	}
	return path
}
