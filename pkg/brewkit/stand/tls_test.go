package stand

import (
	"crypto/x509"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/brew-course/kafka/pkg/brewkit/certs"
)

// EnsureTLS makes a CA, a key store per node that Java can read (PKCS #12
// with the CA in its chain) valid for the addresses clients dial, and the
// admin's client certificate; a second call keeps them all.
func TestEnsureTLSMakesTheStandsCertificatesOnce(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	require.NoError(t, s.EnsureTLS())
	f := s.TLSFiles()
	ca, err := f.Authority()
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	for _, n := range Nodes {
		b, err := os.ReadFile(f.NodeStore(n))
		require.NoError(t, err)
		_, leaf, chain, err := pkcs12.DecodeChain(b, KeyStorePassword)
		require.NoError(t, err, "node %d's key store opens with the stand's password", n)
		require.Len(t, chain, 1)
		require.True(t, chain[0].Equal(ca.Cert))
		for _, host := range []string{"127.0.0.1", "localhost", service(n)} {
			_, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
			require.NoError(t, err, "node %d's certificate is valid for %s", n, host)
		}
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: "kafka.example.com", Roots: roots})
		require.Error(t, err, "and for nothing else")
	}
	admin, err := certs.LoadCert(f.Admin)
	require.NoError(t, err)
	require.Equal(t, AdminUser, admin.Subject.CommonName, "the MTLS listener's principal is the CN")
	_, err = admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)

	before, err := os.ReadFile(f.CA)
	require.NoError(t, err)
	require.NoError(t, os.Remove(f.NodeStore(2)))
	require.NoError(t, s.EnsureTLS())
	after, err := os.ReadFile(f.CA)
	require.NoError(t, err)
	require.Equal(t, before, after, "a fresh CA is kept: the nodes that run trust it")
	require.FileExists(t, f.NodeStore(2), "what is missing is made again")
}
