// A plausible wrong solution of exercise 12/scramclient: the SCRAM-SHA-512
// login over TLS with InsecureSkipVerify, the line that made "x509:
// certificate signed by unknown authority" go away. It logs in and works,
// and it would log in just as well on any server that answers at a
// broker's address. The grader must fail it.
package scramclient

import (
	"crypto/tls"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func ClientOptions(brokers []string, user, password, caFile string) ([]kgo.Opt, error) {
	return []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true}), //nolint:gosec // the mistake this file shows
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()),
	}, nil
}
