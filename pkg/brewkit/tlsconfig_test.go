package brewkit

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/certs"
)

// KAFKA_TLS_CA, KAFKA_TLS_CERT and KAFKA_TLS_KEY turn TLS on with the CA to
// trust and the client certificate to present; a file that is not there or
// a certificate without its key is one line naming the variable.
func TestTLSFromEnv(t *testing.T) {
	dir := t.TempDir()
	ca, err := certs.NewAuthority("test CA", 24*time.Hour)
	require.NoError(t, err)
	caFile, caKey := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	require.NoError(t, ca.Save(caFile, caKey))
	leaf, err := ca.Issue(certs.Request{CommonName: "partner", Client: true})
	require.NoError(t, err)
	cert, key := filepath.Join(dir, "partner.pem"), filepath.Join(dir, "partner-key.pem")
	require.NoError(t, leaf.Save(cert, key))

	cfg, err := configFrom(env(map[string]string{EnvTLSCA: caFile, EnvTLSCert: cert, EnvTLSKey: key}))
	require.NoError(t, err)
	require.True(t, cfg.TLS, "a CA or a certificate means TLS")
	tc := cfg.tlsConfig()
	require.NotNil(t, tc.RootCAs)
	require.Len(t, tc.Certificates, 1)
	require.Len(t, cfg.Opts(), 2, "seeds, TLS")

	cfg, err = configFrom(env(map[string]string{EnvTLSCA: caFile}))
	require.NoError(t, err)
	require.Empty(t, cfg.tlsConfig().Certificates, "a CA alone: TLS without a client certificate")

	for _, bad := range []map[string]string{
		{EnvTLSCA: filepath.Join(dir, "missing.pem")},
		{EnvTLSCA: key}, // a key is no certificate
		{EnvTLSCert: cert},
		{EnvTLSCert: cert, EnvTLSKey: caKey}, // not its key
	} {
		_, err := configFrom(env(bad))
		require.Error(t, err, "%v", bad)
		require.NotContains(t, err.Error(), "\n")
		require.Contains(t, err.Error(), "KAFKA_TLS_", "it names the variable")
	}
}
