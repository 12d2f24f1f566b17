// Package certs is the course's own certificate authority: it makes the CA
// the stand's secured listeners trust, the nodes' server certificates and
// the clients' certificates for mutual TLS, with Go's crypto/x509 only. Keys
// are ECDSA P-256. Nothing it makes is a secret worth keeping: it is a local
// stand's, under .stand/tls, and never committed.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Organization names the course on every certificate it issues.
const Organization = "Brew Kafka course"

// Authority is a certificate authority: its certificate and its key.
type Authority struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewAuthority makes a self-signed CA named name, valid from now for valid.
func NewAuthority(name string, valid time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{Organization}, CommonName: name},
		NotBefore:             now.Add(-time.Hour), // a clock a little behind still accepts it
		NotAfter:              now.Add(valid),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("making the CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// Request is what a certificate is for.
type Request struct {
	CommonName string   // the subject's CN: a client's becomes its Kafka principal on the mTLS listener
	Hosts      []string // IP addresses and DNS names a server certificate is valid for
	Server     bool     // usable by a TLS server (a node)
	Client     bool     // usable by a TLS client (mutual TLS)
	// NotBefore and NotAfter bound it; a zero NotBefore is an hour ago, a
	// zero NotAfter a year from now. An expired certificate is one whose
	// NotAfter has passed.
	NotBefore, NotAfter time.Time
}

// Leaf is an issued certificate, its key and the CA that signed it.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *x509.Certificate
}

// Issue signs a certificate for r.
func (a *Authority) Issue(r Request) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if r.NotBefore.IsZero() {
		r.NotBefore = now.Add(-time.Hour)
	}
	if r.NotAfter.IsZero() {
		r.NotAfter = now.AddDate(1, 0, 0)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{Organization}, CommonName: r.CommonName},
		NotBefore:    r.NotBefore,
		NotAfter:     r.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if r.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if r.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	for _, h := range r.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, &key.PublicKey, a.Key)
	if err != nil {
		return nil, fmt.Errorf("issuing a certificate for %s: %w", r.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key, CA: a.Cert}, nil
}

// CertPEM is c in PEM.
func CertPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// KeyPEM is key as an unencrypted PKCS #8 PEM block.
func KeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Save writes a's certificate and key as PEM files (the key readable by its
// owner only).
func (a *Authority) Save(certFile, keyFile string) error {
	return savePair(a.Cert, a.Key, certFile, keyFile)
}

// Save writes l's certificate and key as PEM files (the key readable by its
// owner only).
func (l *Leaf) Save(certFile, keyFile string) error {
	return savePair(l.Cert, l.Key, certFile, keyFile)
}

func savePair(c *x509.Certificate, key *ecdsa.PrivateKey, certFile, keyFile string) error {
	k, err := KeyPEM(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, CertPEM(c), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, k, 0o600)
}

// PKCS12 is l as a PKCS #12 key store protected by password, its chain
// including the CA: the format a Java server such as a Kafka node reads
// with ssl.keystore.type=PKCS12 (Kafka's file-based PEM key stores demand
// an encrypted key, which Go's standard library does not write).
func (l *Leaf) PKCS12(password string) ([]byte, error) {
	return pkcs12.Modern.Encode(l.Key, l.Cert, []*x509.Certificate{l.CA}, password)
}

// LoadAuthority reads a CA saved with Save.
func LoadAuthority(certFile, keyFile string) (*Authority, error) {
	cert, err := LoadCert(certFile)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", keyFile)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ECDSA key", keyFile)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%s is not the key of %s", keyFile, certFile)
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// LoadCert reads the first certificate of a PEM file.
func LoadCert(file string) (*x509.Certificate, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// ErrExpiring says a certificate is past, or close to, its end.
var ErrExpiring = errors.New("expires within a day")

// Fresh returns nil when c is valid now and for at least a day more.
func Fresh(c *x509.Certificate) error {
	now := time.Now()
	if now.Before(c.NotBefore) {
		return fmt.Errorf("not valid before %s", c.NotBefore.Format(time.RFC3339))
	}
	if now.Add(24 * time.Hour).After(c.NotAfter) {
		return fmt.Errorf("%w (%s)", ErrExpiring, c.NotAfter.Format(time.RFC3339))
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
