// A plausible wrong solution of exercise 12/scramclient: TLS trusting the
// CA, and SCRAM with SHA-256 ("SCRAM is SCRAM", or copied from a cluster
// that offers both). The SECURE listener offers SCRAM-SHA-512 only, and
// answers the handshake with UNSUPPORTED_SASL_MECHANISM. The grader must
// fail it.
package scramclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

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
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots}),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha256Mechanism()),
	}, nil
}
