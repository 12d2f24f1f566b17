// A plausible wrong solution of exercise 12/scramclient: the SCRAM-SHA-512
// login and no TLS ("SCRAM never sends the password, so TLS is optional").
// The listener is SASL_SSL: it expects a TLS handshake first and drops a
// connection that starts with a plaintext request. The grader must fail it.
package scramclient

import (
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func ClientOptions(brokers []string, user, password, caFile string) ([]kgo.Opt, error) {
	return []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()),
	}, nil
}
