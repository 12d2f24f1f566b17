// The reference solution of exercise 12/scramclient.
package scramclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ClientOptions returns the seeds, TLS whose only trusted root is the CA in
// caFile (kgo sets the server name to the address it dials, so the node's
// certificate is checked for 127.0.0.1 too), and the SCRAM-SHA-512 login,
// which runs inside that TLS connection.
func ClientOptions(brokers []string, user, password, caFile string) ([]kgo.Opt, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()),
	}, nil
}
