package scramclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/certs"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/12-security/secure"
)

const (
	standHint    = "this exercise needs the course stand's secured listeners: `make up STAND=native` (or STAND=docker) starts them"
	optionsHint  = "read the CA file with os.ReadFile and put it in an x509.CertPool (AppendCertsFromPEM); return an error only when that fails"
	buildHint    = "kgo.NewClient refuses options that contradict each other: build a client from your options and read its error"
	noTLSHint    = "the SECURE listener speaks TLS (SASL_SSL): without kgo.DialTLSConfig the client sends its requests in plaintext, and the node drops the connection (EOF)"
	caHint       = "the client checks the node's certificate against the CAs it trusts: with an empty tls.Config those are the system's, which never heard of the course CA. Put caFile's certificate in tls.Config.RootCAs"
	hostHint     = "the node's certificate is valid for 127.0.0.1 and localhost: leave tls.Config.ServerName empty (kgo sets it to the address it dials) or name one of them"
	mechHint     = "the SECURE listener offers SCRAM-SHA-512 only (sasl.enabled.mechanisms), and a SCRAM user has a separate credential per mechanism: scram.Auth{User: user, Pass: password}.AsSha512Mechanism()"
	noSASLHint   = "SASL_SSL wants a login right after the TLS handshake: kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism())"
	loginHint    = "the node refused the login: log in as the user and with the password ClientOptions is given"
	failHint     = "the client must reach the SECURE listener at the addresses it is given, log in there and write: read the error above"
	readHint     = "the client wrote the record and could not read it back: keep the options to the connection (TLS and SASL) and leave consuming to the caller"
	passwordHint = "ClientOptions must log in with the password it is given: a client with someone else's password (the course admin's) is not the partner's client"
	refusedHint  = "a wrong password is SASL_AUTHENTICATION_FAILED at once; a client that hides it (a custom dialer that retries, a login callback that swallows errors) leaves the service hanging with no reason"
	trustHint    = "InsecureSkipVerify turns the certificate check off: the connection is encrypted, but to whoever answers at the broker's address, and a man in the middle relays the login and reads every record. Trust the course CA instead (tls.Config.RootCAs from caFile)"
	dialHint     = "ClientOptions must dial the addresses it is given (kgo.SeedBrokers(brokers...)), over TLS"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	if err != nil {
		grade.Fail(t, standHint, "the cluster has no secured listeners to log in on: %v", err)
	}
	adm := env.Admin(t)
	user, password, dropUser, err := c.FreshUser(ctx, "brew-ex-scramclient-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropUser(context.Background()) }) //nolint:errcheck // best effort
	topic, dropTopic, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.secure.ex-scramclient-", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropTopic(context.Background()) }) //nolint:errcheck // best effort
	principal := "User:" + user
	res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpWrite, kadm.OpRead))
	if err == nil {
		err = firstErr(res)
	}
	if err != nil {
		t.Fatalf("giving %s WRITE and READ on %s: %v", principal, topic, err)
	}
	if err := secure.WaitACLs(ctx, env.Client(t), principal, 2); err != nil {
		t.Fatal(err)
	}
	t.Logf("user %s, topic %s, listeners %s", user, topic, strings.Join(c.SASL, ","))

	// The partner's client logs in, writes a record and reads it back.
	opts := options(t, c.SASL, user, password, c.TLS.CA)
	prod, seen := build(t, opts, kgo.RecordDeliveryTimeout(15*time.Second))
	if err := metadata(ctx, prod, 10*time.Second); err != nil {
		cause := seen.cause(err)
		grade.Fail(t, diagnose(prod, cause), "the client (%s) could not log in on %s within 10 s: %v", settings(prod), c.SASL[0], cause)
	}
	value := "shipment-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	err = prod.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr()
	pcancel()
	if err != nil {
		cause := seen.cause(err)
		grade.Fail(t, diagnose(prod, cause), "the client (%s) could not write to %s on %s within 20 s: %v", settings(prod), topic, c.SASL[0], cause)
	}
	cons, seen := build(t, opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	if err := readBack(ctx, cons, value, 20*time.Second); err != nil {
		cause := seen.cause(err)
		grade.Fail(t, readHint, "the client (%s) wrote a record to %s and did not read it back within 20 s: %v", settings(cons), topic, cause)
	}
	t.Logf("wrote and read back %s as %s (%s)", value, user, settings(prod))

	// The same options with a wrong password: refused, and said so.
	wrong, seen := build(t, options(t, c.SASL, user, password+"-wrong", c.TLS.CA))
	start := time.Now()
	err = metadata(ctx, wrong, 10*time.Second)
	took := time.Since(start)
	switch {
	case err == nil:
		grade.Fail(t, passwordHint, "with a wrong password the client (%s) logged in and read the cluster's metadata", settings(wrong))
	case !errors.Is(err, kerr.SaslAuthenticationFailed):
		grade.Fail(t, refusedHint, "with a wrong password the client (%s) ended after %s with %v, not SASL_AUTHENTICATION_FAILED (its connections saw: %v)",
			settings(wrong), took.Round(100*time.Millisecond), err, seen.cause(err))
	}
	t.Logf("a wrong password, after %s: %v", took.Round(time.Millisecond), err)

	// The same options against a TLS server whose certificate another CA
	// signed, valid for 127.0.0.1: the handshake must fail.
	impostor := startImpostor(t)
	fake, _ := build(t, options(t, []string{impostor.addr}, user, password, c.TLS.CA))
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	go metadata(mctx, fake, 10*time.Second) //nolint:errcheck // the impostor says what happened
	hs, ok := impostor.first(10 * time.Second)
	mcancel()
	switch {
	case !ok:
		grade.Fail(t, dialHint, "the client (%s) given the address %s did not connect to it within 10 s", settings(fake), impostor.addr)
	case !hs.hello:
		grade.Fail(t, noTLSHint, "the client (%s) connected to %s and sent no TLS handshake: %v", settings(fake), impostor.addr, hs.err)
	case hs.err == nil:
		grade.Fail(t, trustHint, "the client (%s) finished a TLS handshake with %s, whose certificate %q signed, not the course CA: it would log in on any server that answers at a broker's address",
			settings(fake), impostor.addr, impostor.issuer)
	}
	t.Logf("the impostor at %s saw the handshake end with: %v", impostor.addr, hs.err)
}

// options calls ClientOptions.
func options(t *testing.T, brokers []string, user, password, caFile string) []kgo.Opt {
	t.Helper()
	opts, err := ClientOptions(brokers, user, password, caFile)
	grade.Failed(t, err, optionsHint, fmt.Sprintf("ClientOptions(%q, %q, ..., %q)", brokers, user, caFile))
	return opts
}

// build is a client of the student's options, bounded by the grader's (no
// wait lasts for ever), and the watch that sees its connections' errors.
func build(t *testing.T, opts []kgo.Opt, more ...kgo.Opt) (*kgo.Client, *watch) {
	t.Helper()
	w := &watch{}
	all := append(append([]kgo.Opt{}, opts...),
		kgo.DialTimeout(5*time.Second), kgo.RequestTimeoutOverhead(5*time.Second), kgo.RetryTimeout(15*time.Second),
		kgo.WithHooks(w))
	cl, err := kgo.NewClient(append(all, more...)...)
	grade.Failed(t, err, buildHint, "building a client from ClientOptions")
	t.Cleanup(func() { closeBounded(cl) })
	return cl, w
}

// closeBounded closes cl, or leaves it after 5 s.
func closeBounded(cl *kgo.Client) {
	done := make(chan struct{})
	go func() { cl.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// metadata asks for the metadata of no topic, which needs a login and no ACL.
func metadata(ctx context.Context, cl *kgo.Client, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	done := make(chan error, 1)
	go func() { _, err := req.RequestWith(ctx, cl); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit + 5*time.Second):
		return fmt.Errorf("no answer within %s", limit)
	}
}

// readBack polls cl until it has the record whose value is value.
func readBack(ctx context.Context, cl *kgo.Client, value string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("no record with value %s within %s", value, limit)
		}
		for _, e := range fs.Errors() {
			return e.Err
		}
		for _, r := range fs.Records() {
			if string(r.Value) == value {
				return nil
			}
		}
	}
}

// watch remembers the last error a connection of its client ended with: a
// produce that times out says only that, the connection says why.
type watch struct {
	mu   sync.Mutex
	last error
}

func (w *watch) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		w.mu.Lock()
		w.last = err
		w.mu.Unlock()
	}
}

func (w *watch) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	if err := e.Err(); err != nil {
		w.mu.Lock()
		w.last = err
		w.mu.Unlock()
	}
}

// cause is err, or when err only says that time ran out, the connection's
// error behind it.
func (w *watch) cause(err error) error {
	if err == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last != nil && !isKafkaErr(err) {
		return w.last
	}
	return err
}

func isKafkaErr(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

// diagnose names the hint for what kept a client from writing.
func diagnose(cl *kgo.Client, err error) string {
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return mechHint
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return loginHint
	case errors.As(err, &unknownCA):
		return caHint
	case errors.As(err, &host):
		return hostHint
	case tlsConfig(cl) == nil:
		return noTLSHint
	case len(mechanisms(cl)) == 0:
		return noSASLHint
	}
	return failHint
}

// settings says what a client was built with, for the findings.
func settings(cl *kgo.Client) string {
	var parts []string
	switch tc := tlsConfig(cl); {
	case tc == nil:
		parts = append(parts, "no kgo.DialTLSConfig")
	case tc.InsecureSkipVerify:
		parts = append(parts, "TLS with InsecureSkipVerify")
	case tc.RootCAs == nil:
		parts = append(parts, "TLS trusting the system's CAs")
	default:
		parts = append(parts, "TLS trusting its own CAs")
	}
	var names []string
	for _, m := range mechanisms(cl) {
		names = append(names, m.Name())
	}
	if len(names) == 0 {
		parts = append(parts, "no SASL")
	} else {
		parts = append(parts, "SASL "+strings.Join(names, ", "))
	}
	return strings.Join(parts, ", ")
}

func tlsConfig(cl *kgo.Client) *tls.Config {
	tc, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
	return tc
}

func mechanisms(cl *kgo.Client) []sasl.Mechanism {
	ms, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	return ms
}

// impostor is a TLS server on 127.0.0.1 with a certificate another CA
// signed: it completes a handshake only with a client that trusts anyone,
// and then hangs up.
type impostor struct {
	addr, issuer string
	seen         chan handshake
}

// handshake is what the impostor saw of one connection: a ClientHello, and
// how the handshake ended.
type handshake struct {
	hello bool
	err   error
}

func startImpostor(t *testing.T) *impostor {
	t.Helper()
	ca, err := certs.NewAuthority("Not the Brew course CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(certs.Request{CommonName: "impostor", Server: true, Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	pair := tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key, Leaf: leaf.Cert}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	im := &impostor{addr: ln.Addr().String(), issuer: ca.Cert.Subject.CommonName, seen: make(chan handshake, 16)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck // a fresh conn
				var hs handshake
				srv := tls.Server(conn, &tls.Config{
					Certificates: []tls.Certificate{pair},
					GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
						hs.hello = true
						return nil, nil
					},
				})
				hs.err = srv.Handshake()
				select {
				case im.seen <- hs:
				default:
				}
			}()
		}
	}()
	return im
}

// first is the first handshake the impostor saw, within limit.
func (im *impostor) first(limit time.Duration) (handshake, bool) {
	select {
	case hs := <-im.seen:
		return hs, true
	case <-time.After(limit):
		return handshake{}, false
	}
}

func firstErr(res kadm.CreateACLsResults) error {
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
