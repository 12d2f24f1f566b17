package tlsprobe

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it: the listeners, a row per case
// (the step it ended at, OK or the exact error), and a line per case on what
// it means and what fixes it.
func Print(w io.Writer, r Result) {
	fmt.Fprintf(w, "tls: node 1's secured listeners, each connection within %s\n", r.Timeout)
	fmt.Fprintf(w, "  SECURE  %s  SASL_SSL: TLS, then %s as %s\n", r.Secure, r.Mechanism, r.User)
	fmt.Fprintf(w, "  MTLS    %s  SSL with a client certificate required; the principal is its CN\n", r.MTLS)
	fmt.Fprintf(w, "  a connection that gets through asks for the metadata of %s as its principal\n\n", r.Topic)
	t := brewkit.NewTable(w, "CASE", "LISTENER", "CLIENT", "STEP", "RESULT")
	for _, c := range r.Cases {
		res := "OK"
		if c.Err != nil {
			res = oneLine(c.Err.Error())
		}
		t.Row(c.ID, c.Listener, c.Client, c.Step, res)
	}
	t.Flush()
	fmt.Fprintln(w)
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%-3s %s\n", c.ID, Meaning(r, c))
	}
}

// Meaning is one line on what case c's outcome means and what fixes it.
func Meaning(r Result, c Case) string {
	if !c.Expected {
		return "not what the lecture shows: see the README's tls part for what this case should end with"
	}
	host, _, _ := net.SplitHostPort(r.Secure)
	switch c.ID {
	case "1":
		return fmt.Sprintf("%s: the client checked the node's certificate (%s) against ca.pem and for the name %s, then logged in: encrypted, and it is the broker",
			tls.VersionName(c.Version), c.Peer, host)
	case "2":
		return "the node's certificate chains to no CA the client trusts (the system's roots do not know the course CA): set KAFKA_TLS_CA=.stand/tls/ca.pem"
	case "3":
		return "the certificate is the course CA's, but not for the name the client asked for: dial a name it lists, or have the CA issue one for the name"
	case "4":
		return "it works because the client checks nothing: any certificate would do, so it proves nothing about who answers"
	case "4b":
		return fmt.Sprintf("the relay showed its own certificate (%s, another CA), the client took it, and the relay read the login of %s: never ship InsecureSkipVerify",
			c.Peer, c.Relayed)
	case "5":
		return fmt.Sprintf("the handshake passed and the principal is User:%s, the certificate's CN; no ACL lets it describe %s: the certificate authenticates, ACLs authorize",
			r.CN, r.Topic)
	case "5b":
		return "the same listener with brew's certificate: User:brew is a super user, so it may"
	case "6":
		return fmt.Sprintf("the node asked for a certificate (%s) and got none: set KAFKA_TLS_CERT and KAFKA_TLS_KEY; %s",
			asked(c), tls13(c))
	case "7":
		return "its CA is not in the node's trust store (ssl.truststore.location): only a certificate the cluster's CA signed gets in"
	case "7b":
		if c.Sent {
			return "Go's client sent it: the node named no CA it accepts"
		}
		return "Go's client sends a certificate only when the node names its issuer; it sent none, so this is case 6: what a wrong KAFKA_TLS_CERT gets"
	case "8":
		return "the course CA signed it, but its NotAfter has passed; the alert is case 7's and the node logs only \"SSL handshake failed\": check the dates, renew before it expires"
	}
	return ""
}

func asked(c Case) string {
	if len(c.Asked) == 0 {
		return "from any CA"
	}
	return "signed by " + strings.Join(c.Asked, "; ")
}

func tls13(c Case) string {
	if c.Version == tls.VersionTLS13 {
		return "under TLS 1.3 the client's handshake returns before the node checks it, so the refusal comes with the first reply"
	}
	return "under TLS 1.2 the handshake itself fails"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
