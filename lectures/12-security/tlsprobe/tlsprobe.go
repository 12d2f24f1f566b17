// Package tlsprobe is lecture 12's `tlsprobe` program (make tls): it connects to node 1's
// secured listeners the ways a client gets TLS right and wrong, and reports
// for each connection how far it got and the exact error it ended with.
//
// On SECURE (SASL_SSL) the client checks the server: the course CA, no CA,
// the wrong host name, no check at all (InsecureSkipVerify), and no check
// with a relay in the middle. On MTLS the server checks the client too: a
// certificate the course CA signed (its CN is the principal), the admin's,
// none, one from another CA, and an expired one.
//
// Each connection goes step by step, so that an error is reported where it
// happens: the TLS handshake (crypto/tls, as the client sees it), the first
// request on the connection and its reply (ApiVersions), the SASL login with
// a kgo client, and a request as the connection's principal (the metadata
// of a topic). Under TLS 1.3 the client's handshake returns before the server
// has checked the client's certificate, so a refused certificate surfaces at
// the first reply.
package tlsprobe

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options configure a run.
type Options struct {
	Topic     string        // the topic each principal asks about (made when missing)
	CN        string        // the CN of the partner's certificate: its principal on MTLS
	WrongHost string        // case 3's tls.Config.ServerName: a name no node certificate carries
	Timeout   time.Duration // bounds each case
}

// Defaults are the README's run.
var Defaults = Options{Topic: "brew.secure.tls", CN: "partner", WrongHost: "kafka.brew.example", Timeout: 5 * time.Second}

// Stand is what the cases connect to, and with.
type Stand struct {
	Secure string // a SASL_SSL listener (host:port): node 1's SECURE
	MTLS   string // a mutual-TLS listener: node 1's MTLS
	CA     *x509.CertPool
	// The SCRAM login on Secure.
	Mechanism, User, Password string

	Admin    tls.Certificate // a super user's client certificate (brew.pem)
	Partner  tls.Certificate // CN=Options.CN, signed by the course CA
	Expired  tls.Certificate // CN=Options.CN, signed by the course CA, NotAfter past
	Stranger tls.Certificate // CN=Options.CN, signed by another CA
	// RelayCert is the certificate the relay of case 4b shows the client
	// (from the other CA, valid for 127.0.0.1).
	RelayCert tls.Certificate
	// Made names what Prepare created for the run.
	Made []string
}

// Step is how far a connection got.
type Step string

// The steps of a connection, in order.
const (
	Handshake  Step = "handshake"   // the TLS handshake, as the client sees it
	FirstReply Step = "first reply" // the first request on the connection (ApiVersions) and its reply
	Login      Step = "login"       // the SASL login (a kgo client), then a metadata request
	Request    Step = "request"     // the topic's metadata, asked as the connection's principal
)

// Listener names where a case connects.
type Listener string

// The listeners.
const (
	Secure Listener = "SECURE"
	MTLS   Listener = "MTLS"
	Relay  Listener = "relay"
)

// Case is one connection and how it ended.
type Case struct {
	ID       string
	Listener Listener
	Client   string // what the client did
	Step     Step   // the step it ended at: the one that failed, or the last one
	Err      error  // nil: every step passed
	Version  uint16 // the TLS version negotiated, once the client's handshake returned
	// Asked are the CAs (subject names) the server's certificate request
	// named, when it asked the client for a certificate.
	Asked []string
	// Requested says the server asked the client for a certificate, Sent
	// that the client sent one.
	Requested, Sent bool
	// Relayed is the user whose SCRAM login the relay of case 4b read.
	Relayed string
	// Peer is the subject of the certificate the client was shown.
	Peer string
	// Local is the client's end of the step-by-step connection (host:port),
	// as the node's log names it.
	Local string
	// Expected says the case ended the way the lecture shows.
	Expected bool
}

// OK reports whether every step passed.
func (c Case) OK() bool { return c.Err == nil }

// Result is a run: every case, in order.
type Result struct {
	Secure, MTLS string
	Topic        string
	User         string
	Mechanism    string
	CN           string
	WrongHost    string
	Timeout      time.Duration
	Cases        []Case
}

// Case returns the case with that id.
func (r Result) Case(id string) Case {
	for _, c := range r.Cases {
		if c.ID == id {
			return c
		}
	}
	return Case{}
}

// Unexpected are the cases that did not end as the lecture shows.
func (r Result) Unexpected() []Case {
	var out []Case
	for _, c := range r.Cases {
		if !c.Expected {
			out = append(out, c)
		}
	}
	return out
}

// spec is one case to run.
type spec struct {
	id       string
	listener Listener
	client   string
	sasl     bool                           // log in with SCRAM (SECURE)
	cert     func(s Stand) *tls.Certificate // the client certificate presented; nil: none
	// goPicks leaves it to Go's own choice, as with tls.Config.Certificates
	// (KAFKA_TLS_CERT): only a certificate whose issuer the server names.
	goPicks bool
	config  func(s Stand, o Options, tc *tls.Config)
	want    func(c Case, s Stand) bool
}

func trustCA(s Stand, _ Options, tc *tls.Config) { tc.RootCAs = s.CA }

func specs(o Options) []spec {
	return []spec{
		{id: "1", listener: Secure, client: "trusts the course CA (ca.pem)", sasl: true, config: trustCA, want: passed},
		{id: "2", listener: Secure, client: "trusts the system's CAs", sasl: true,
			config: func(Stand, Options, *tls.Config) {},
			want:   endedWith[x509.UnknownAuthorityError](Handshake)},
		{id: "3", listener: Secure, client: "trusts ca.pem, ServerName " + o.WrongHost, sasl: true,
			config: func(s Stand, o Options, tc *tls.Config) { tc.RootCAs, tc.ServerName = s.CA, o.WrongHost },
			want:   endedWith[x509.HostnameError](Handshake)},
		{id: "4", listener: Secure, client: "InsecureSkipVerify", sasl: true, config: skipVerify, want: passed},
		{id: "4b", listener: Relay, client: "InsecureSkipVerify, a relay in between", sasl: true, config: skipVerify,
			want: func(c Case, s Stand) bool { return c.OK() && c.Relayed == s.User }},
		{id: "5", listener: MTLS, client: "certificate CN=" + o.CN + " (course CA)", config: trustCA,
			cert: func(s Stand) *tls.Certificate { return &s.Partner },
			want: func(c Case, _ Stand) bool {
				return c.Step == Request && errors.Is(c.Err, kerr.TopicAuthorizationFailed)
			}},
		{id: "5b", listener: MTLS, client: "certificate CN=brew (brew.pem)", config: trustCA,
			cert: func(s Stand) *tls.Certificate { return &s.Admin }, want: passed},
		{id: "6", listener: MTLS, client: "no certificate", config: trustCA,
			cert: func(Stand) *tls.Certificate { return nil }, want: refused},
		{id: "7", listener: MTLS, client: "CN=" + o.CN + " from another CA", config: trustCA,
			cert: func(s Stand) *tls.Certificate { return &s.Stranger }, want: refused},
		{id: "7b", listener: MTLS, client: "the same, as Go picks (KAFKA_TLS_CERT)", config: trustCA, goPicks: true,
			cert: func(s Stand) *tls.Certificate { return &s.Stranger },
			want: func(c Case, s Stand) bool { return refused(c, s) && !c.Sent }},
		{id: "8", listener: MTLS, client: "CN=" + o.CN + " (course CA), expired", config: trustCA,
			cert: func(s Stand) *tls.Certificate { return &s.Expired }, want: refused},
	}
}

func skipVerify(_ Stand, _ Options, tc *tls.Config) {
	tc.InsecureSkipVerify = true //nolint:gosec // the lesson: what it lets through
}

func passed(c Case, _ Stand) bool { return c.OK() }

// endedWith: the case failed at step with an error of type E.
func endedWith[E error](step Step) func(Case, Stand) bool {
	return func(c Case, _ Stand) bool {
		_, ok := errors.AsType[E](c.Err)
		return ok && c.Step == step
	}
}

// refused: the server refused the client's certificate with a TLS alert,
// at the first reply under TLS 1.3, in the handshake under TLS 1.2.
func refused(c Case, _ Stand) bool {
	if !IsAlert(c.Err) {
		return false
	}
	if c.Version == tls.VersionTLS13 {
		return c.Step == FirstReply
	}
	return c.Step == Handshake
}

// IsAlert reports whether err is a TLS alert the peer sent ("remote error:
// tls: bad certificate").
func IsAlert(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "remote error"
}

// Run connects once per case, each within o.Timeout. It returns an error
// only when ctx ends, or when a listener does not accept TCP connections at
// all (the cases would say nothing then).
func Run(ctx context.Context, s Stand, o Options) (Result, error) {
	r := Result{Secure: s.Secure, MTLS: s.MTLS, Topic: o.Topic, User: s.User, Mechanism: s.Mechanism,
		CN: o.CN, WrongHost: o.WrongHost, Timeout: o.Timeout}
	for _, l := range []struct{ name, addr string }{{"SECURE", s.Secure}, {"MTLS", s.MTLS}} {
		if err := reachable(ctx, l.addr); err != nil {
			return r, fmt.Errorf("nothing accepts connections on the %s listener %s (%v): the stand runs without its secured listeners; `make down` and `make up` in the repository root start them", l.name, l.addr, err)
		}
	}
	for _, sp := range specs(o) {
		c := run(ctx, s, o, sp)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		c.Expected = sp.want(c, s)
		r.Cases = append(r.Cases, c)
	}
	return r, nil
}

func reachable(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// run makes one case's connection, step by step.
func run(parent context.Context, s Stand, o Options, sp spec) (c Case) {
	c = Case{ID: sp.id, Listener: sp.listener, Client: sp.client}
	ctx, cancel := context.WithTimeout(parent, o.Timeout)
	defer cancel()

	addr := s.Secure
	switch sp.listener {
	case MTLS:
		addr = s.MTLS
	case Relay:
		rl, err := startRelay(s.RelayCert, s.Secure)
		if err != nil {
			c.Step, c.Err = Handshake, err
			return c
		}
		defer func() { c.Relayed = rl.Close() }()
		addr = rl.Addr()
	}
	tc := clientConfig(s, o, sp, &c)

	// The handshake, as the client sees it.
	c.Step = Handshake
	conn, err := handshake(ctx, addr, tc, &c)
	if err != nil {
		c.Err = deadline(ctx, err)
		return c
	}

	// The first request on the connection: the server's alert, if it
	// refused the client's certificate, is what the client reads.
	c.Step = FirstReply
	err = apiVersions(ctx, conn)
	conn.Close()
	if err != nil {
		c.Err = deadline(ctx, err)
		return c
	}

	// A kgo client as a program has it: a login, if any, then a request
	// as the connection's principal.
	c.Step, c.Err = askMetadata(ctx, s, o, addr, tc, sp.sasl)
	return c
}

// clientConfig is the case's client TLS config. When the server asks for
// a client certificate, c notes the CAs it named and whether the case's
// certificate was sent.
func clientConfig(s Stand, o Options, sp spec, c *Case) *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	sp.config(s, o, tc)
	if sp.cert != nil {
		present := sp.cert(s)
		// The certificate is presented whatever the server asks: Go's
		// client on its own sends none when its certificate's issuer is
		// not among the CAs the server names.
		tc.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c.Requested, c.Asked = true, names(cri.AcceptableCAs)
			if present == nil || sp.goPicks && cri.SupportsCertificate(present) != nil {
				return &tls.Certificate{}, nil // what crypto/tls sends then: none
			}
			c.Sent = true
			return present, nil
		}
	}
	return tc
}

// handshake dials addr and makes the TLS handshake, as the client sees it,
// noting in c the connection's local address, the TLS version negotiated
// and the certificate the server showed.
func handshake(ctx context.Context, addr string, tc *tls.Config, c *Case) (*tls.Conn, error) {
	hc := tc.Clone()
	if hc.ServerName == "" {
		hc.ServerName, _, _ = net.SplitHostPort(addr) // as kgo does
	}
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c.Local = raw.LocalAddr().String()
	conn := tls.Client(raw, hc)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	st := conn.ConnectionState()
	c.Version = st.Version
	if len(st.PeerCertificates) > 0 {
		c.Peer = st.PeerCertificates[0].Subject.String()
	}
	return conn, nil
}

// askMetadata connects to addr with a kgo client, which logs in first when
// sasl, and asks for the metadata of o.Topic as the connection's principal.
// It returns the step it ended at: Login while the login fails, then
// Request.
func askMetadata(ctx context.Context, s Stand, o Options, addr string, tc *tls.Config, sasl bool) (Step, error) {
	cfg := brewkit.Config{Brokers: []string{addr}, TLS: true, TLSConfig: tc, Timeout: o.Timeout}
	step := Request
	if sasl {
		cfg.SASL, cfg.User, cfg.Pass = s.Mechanism, s.User, s.Password
		step = Login
	}
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return step, err
	}
	defer cl.Close()
	if err := cl.Ping(ctx); err != nil {
		return step, deadline(ctx, err)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, o.Topic)
	if err == nil {
		if td, ok := md.Topics[o.Topic]; !ok {
			err = fmt.Errorf("no metadata for %s", o.Topic)
		} else {
			err = td.Err
		}
	}
	return Request, deadline(ctx, err)
}

// deadline names the case's bound when it ran out.
func deadline(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within the case's bound (%w)", err)
	}
	return err
}

// names are the distinguished names of a certificate request's CAs.
func names(ders [][]byte) []string {
	var out []string
	for _, der := range ders {
		var seq pkix.RDNSequence
		if _, err := asn1.Unmarshal(der, &seq); err != nil {
			continue
		}
		var n pkix.Name
		n.FillFromRDNSequence(&seq)
		out = append(out, n.String())
	}
	return out
}

// apiVersions sends an ApiVersions request on conn and reads its reply.
func apiVersions(ctx context.Context, conn net.Conn) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(Defaults.Timeout)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "brew-course", "1"
	const correlationID = 1
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("brew-course"))
	if _, err := conn.Write(f.AppendRequest(nil, req, correlationID)); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	var size int32
	if err := binary.Read(r, binary.BigEndian, &size); err != nil {
		return err
	}
	if size < 4 || size > 1<<20 {
		return fmt.Errorf("a reply of %d bytes: not Kafka", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(body) != correlationID {
		return errors.New("a reply to another request: not Kafka")
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	// ApiVersions replies have no tagged header fields, even at v3.
	if err := resp.ReadFrom(body[4:]); err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}
