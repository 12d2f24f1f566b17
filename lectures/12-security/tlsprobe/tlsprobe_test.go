package tlsprobe_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/tlsprobe"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/certs"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func suffix(t *testing.T) string {
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	require.NoError(t, err)
	return fmt.Sprint(n)
}

// simStand is a Stand on the simulation: a CA of the test's own signs the
// nodes' certificate (valid for 127.0.0.1, localhost and kafka-1, as the
// stand's node 1) and the clients'. SECURE is a simulated cluster that wants
// a SCRAM-SHA-512 login over TLS; MTLS is a kfake node whose TLS requires
// and verifies a client certificate from that CA. kfake has no principal
// from a certificate and no ACLs on one, so case 5 passes there.
func simStand(t *testing.T, o tlsprobe.Options) (tlsprobe.Stand, *x509.Certificate) {
	t.Helper()
	return simStandUpTo(t, o, tls.VersionTLS13)
}

// simStandUpTo is simStand with the mutual-TLS node speaking TLS up to max.
func simStandUpTo(t *testing.T, o tlsprobe.Options, max uint16) (tlsprobe.Stand, *x509.Certificate) {
	t.Helper()
	ca, err := certs.NewAuthority("Test course CA", 24*time.Hour)
	require.NoError(t, err)
	node, err := ca.Issue(certs.Request{CommonName: "node1", Server: true, Hosts: []string{"127.0.0.1", "localhost", "kafka-1"}})
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	login := &sim.Login{User: "brew", Pass: "brew-secret", Mechanism: "SCRAM-SHA-512"}
	secured, err := sim.New(sim.Options{Login: login, TLS: &tls.Config{Certificates: []tls.Certificate{tlsprobe.Pair(node)}}})
	require.NoError(t, err)
	t.Cleanup(secured.Close)
	admin := secured.Config()
	admin.TLSConfig = &tls.Config{RootCAs: pool}
	_, adm, err := brewkit.Connect(ctxFor(t, 10*time.Second), admin)
	require.NoError(t, err)
	t.Cleanup(adm.Close)
	_, err = brewkit.EnsureTopics(ctxFor(t, 10*time.Second), adm, brewkit.TopicNamed(o.Topic, 1))
	require.NoError(t, err)

	mtls, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, o.Topic), kfake.TLS(&tls.Config{
		Certificates: []tls.Certificate{tlsprobe.Pair(node)},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MaxVersion:   max,
	}))
	require.NoError(t, err)
	t.Cleanup(mtls.Close)

	issue := func(r certs.Request) tls.Certificate {
		l, err := ca.Issue(r)
		require.NoError(t, err)
		return tlsprobe.Pair(l)
	}
	s := tlsprobe.Stand{
		Secure: secured.Addrs()[0], MTLS: mtls.ListenAddrs()[0], CA: pool,
		Mechanism: login.Mechanism, User: login.User, Password: login.Pass,
		Admin:   issue(certs.Request{CommonName: "brew", Client: true}),
		Partner: issue(certs.Request{CommonName: o.CN, Client: true}),
		Expired: issue(certs.Request{CommonName: o.CN, Client: true,
			NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}),
	}
	s.Stranger, s.RelayCert, err = tlsprobe.Strangers(o.CN)
	require.NoError(t, err)
	return s, ca.Cert
}

// requireServerChecks holds cases 1 to 4b to what the lecture shows: they are
// the client's own checks of the server, the same on the simulation and on
// Kafka.
func requireServerChecks(t *testing.T, r tlsprobe.Result, wrongHost string) {
	t.Helper()
	c := r.Case("1")
	require.NoError(t, c.Err, "the course CA")
	require.Equal(t, uint16(tls.VersionTLS13), c.Version)
	require.Contains(t, c.Peer, "CN=node1")

	c = r.Case("2")
	_, ok := errors.AsType[x509.UnknownAuthorityError](c.Err)
	require.True(t, ok, "no CA: %v", c.Err)
	require.Equal(t, tlsprobe.Handshake, c.Step)
	require.Equal(t, "tls: failed to verify certificate: x509: certificate signed by unknown authority", c.Err.Error())

	c = r.Case("3")
	host, ok := errors.AsType[x509.HostnameError](c.Err)
	require.True(t, ok, "the wrong host name: %v", c.Err)
	require.Equal(t, wrongHost, host.Host)
	require.Equal(t, tlsprobe.Handshake, c.Step)
	require.Contains(t, c.Err.Error(), "x509: certificate is valid for localhost, kafka-1, not "+wrongHost)

	c = r.Case("4")
	require.NoError(t, c.Err, "InsecureSkipVerify")
	require.Equal(t, tlsprobe.Request, c.Step)

	c = r.Case("4b")
	require.NoError(t, c.Err, "InsecureSkipVerify through a relay")
	require.Equal(t, "brew", c.Relayed, "the relay read the login")
	require.Contains(t, c.Peer, "CN=relay", "the client took the relay's certificate")
}

// Fast tier: the cases on the simulation. The server's certificate is the
// client's own check, so cases 1-4b end as on the stand. The mutual-TLS
// node is kfake with Go's TLS server requiring a client certificate: it
// refuses the same three, at the first reply (TLS 1.3), with Go's alerts,
// which name the reason (Kafka's JSSE says only "bad certificate" or
// "unknown certificate"); kfake maps no certificate to a principal, so case
// 5 gets through there.
func TestCasesOnTheSimulation(t *testing.T) {
	o := tlsprobe.Defaults
	o.Topic = "brew.secure.tls-" + suffix(t)
	s, _ := simStand(t, o)
	r, err := tlsprobe.Run(ctxFor(t, time.Minute), s, o)
	require.NoError(t, err)
	var b strings.Builder
	tlsprobe.Print(&b, r)
	t.Log("\n" + b.String())

	requireServerChecks(t, r, o.WrongHost)
	for _, id := range []string{"1", "2", "3", "4", "4b"} {
		require.True(t, r.Case(id).Expected, "case %s", id)
	}
	c := r.Case("5")
	require.NoError(t, c.Err, "kfake: no principal from the CN, no ACLs on it")
	require.NoError(t, r.Case("5b").Err)
	for id, alert := range map[string]string{
		"6":  "remote error: tls: certificate required",
		"7":  "remote error: tls: unknown certificate authority",
		"7b": "remote error: tls: certificate required",
		"8":  "remote error: tls: expired certificate",
	} {
		c := r.Case(id)
		require.True(t, tlsprobe.IsAlert(c.Err), "case %s: %v", id, c.Err)
		require.Equal(t, alert, c.Err.Error(), "case %s: Go's TLS server", id)
		require.Equal(t, tlsprobe.FirstReply, c.Step, "case %s: TLS 1.3 refuses after the client's handshake", id)
		require.True(t, c.Requested, "case %s: the server asked for a certificate", id)
		require.True(t, c.Expected, "case %s", id)
	}
	require.Equal(t, []string{"CN=Test course CA,O=" + certs.Organization}, r.Case("6").Asked)
	requireSent(t, r)
}

// Under TLS 1.2 the client's handshake waits for the server's Finished, so
// a refused client certificate fails the handshake itself.
func TestTLS12RefusesInTheHandshake(t *testing.T) {
	o := tlsprobe.Defaults
	s, _ := simStandUpTo(t, o, tls.VersionTLS12)
	r, err := tlsprobe.Run(ctxFor(t, time.Minute), s, o)
	require.NoError(t, err)
	for _, id := range []string{"6", "7", "7b", "8"} {
		c := r.Case(id)
		require.True(t, tlsprobe.IsAlert(c.Err), "case %s: %v", id, c.Err)
		require.Equal(t, tlsprobe.Handshake, c.Step, "case %s", id)
		require.True(t, c.Expected, "case %s", id)
	}
	require.NoError(t, r.Case("5b").Err)
	require.Equal(t, uint16(tls.VersionTLS12), r.Case("5b").Version)
}

// Each case is bounded: a listener that accepts connections and never
// answers ends every case within its bound.
func TestEachCaseIsBounded(t *testing.T) {
	o := tlsprobe.Defaults
	o.Timeout = 300 * time.Millisecond
	s, _ := simStand(t, o)
	silent := silentListener(t)
	s.Secure, s.MTLS = silent, silent
	start := time.Now()
	r, err := tlsprobe.Run(ctxFor(t, time.Minute), s, o)
	require.NoError(t, err)
	require.Len(t, r.Cases, 11)
	for _, c := range r.Cases {
		require.Error(t, c.Err, "case %s", c.ID)
		require.False(t, c.Expected, "case %s", c.ID)
	}
	require.Less(t, time.Since(start), 10*time.Second)
}

func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// Real tier: every case on the stand's node 1, each ending with its error
// class at its step: Kafka's JSSE refuses a missing, untrusted and expired
// client certificate after the client's TLS 1.3 handshake, and the CN of a
// certificate the course CA signed is the principal the ACLs see.
func TestCasesOnTheStand(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx := ctxFor(t, time.Minute)
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	o := tlsprobe.Defaults
	o.Topic = env.FreshTopic(t, "tls", 1)
	o.CN = "tls-partner-" + suffix(t)
	t.Cleanup(func() { removeClientCert(t, c, o.CN) })
	s, err := tlsprobe.Prepare(ctx, c, o)
	require.NoError(t, err)
	require.Len(t, s.Made, 1, "the partner's certificate; the topic was there")
	r, err := tlsprobe.Run(ctx, s, o)
	require.NoError(t, err)
	var b strings.Builder
	tlsprobe.Print(&b, r)
	t.Log("\n" + b.String())

	requireServerChecks(t, r, o.WrongHost)
	cs := r.Case("5")
	require.ErrorIs(t, cs.Err, kerr.TopicAuthorizationFailed, "User:%s has no ACL", o.CN)
	require.Equal(t, tlsprobe.Request, cs.Step, "the handshake and the first reply passed")
	require.Equal(t, uint16(tls.VersionTLS13), cs.Version)
	require.NoError(t, r.Case("5b").Err, "User:brew is a super user")
	// A node that gets no certificate answers bad_certificate on the
	// native stand's JDK (Debian's 17.0.15) and certificate_required on the
	// docker stand-in's (measured): either is a refusal in the handshake.
	noCert := []string{"remote error: tls: bad certificate", "remote error: tls: certificate required"}
	for id, alerts := range map[string][]string{
		"6":  noCert,
		"7":  {"remote error: tls: unknown certificate"},
		"7b": noCert,
		"8":  {"remote error: tls: unknown certificate"},
	} {
		c := r.Case(id)
		require.True(t, tlsprobe.IsAlert(c.Err), "case %s: %v", id, c.Err)
		require.Contains(t, alerts, c.Err.Error(), "case %s: Kafka's alert", id)
		require.Equal(t, tlsprobe.FirstReply, c.Step, "case %s", id)
		require.True(t, c.Requested, "case %s: the node asked for a certificate", id)
	}
	require.Equal(t, []string{"CN=Brew course CA,O=" + certs.Organization}, r.Case("6").Asked, "the node names the course CA")
	requireSent(t, r)
	require.Empty(t, r.Unexpected())

	// The node's log says no more than the alert: for each refused
	// connection, "SSL handshake failed". Found by the client's port, which
	// only the native node sees: a docker node sees Docker's port proxy.
	if env.Stand(t).Current() != stand.Native {
		return
	}
	for _, id := range []string{"6", "7", "8"} {
		c := r.Case(id)
		channel := fmt.Sprintf("channelId=%s-%s-", s.MTLS, c.Local)
		brewtest.Eventually(t, 10*time.Second, "node 1 logs case "+id, func() (bool, string) {
			var log strings.Builder
			if err := env.Stand(t).Logs(1, &log); err != nil {
				return false, err.Error()
			}
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.Contains(l, channel) {
					require.Contains(t, l, "Failed authentication with /127.0.0.1 ("+channel, "case %s", id)
					require.True(t, strings.HasSuffix(l, "(SSL handshake failed) (org.apache.kafka.common.network.Selector)"), "case %s: %s", id, l)
					return true, ""
				}
			}
			return false, "no line for " + channel
		})
	}
}

// requireSent: the certificates of cases 7 and 8 went out; Go's own choice
// (7b) sent none, as case 6.
func requireSent(t *testing.T, r tlsprobe.Result) {
	t.Helper()
	for id, sent := range map[string]bool{"5": true, "5b": true, "6": false, "7": true, "7b": false, "8": true} {
		require.Equal(t, sent, r.Case(id).Sent, "case %s", id)
	}
}

func removeClientCert(t *testing.T, c secure.Cluster, cn string) {
	for _, f := range []string{cn + ".pem", cn + "-key.pem"} {
		if err := os.Remove(filepath.Join(c.TLS.Dir, "clients", f)); err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
	}
}

// What brewkit.Ping says to a student whose KAFKA_TLS_CA, KAFKA_TLS_CERT
// and KAFKA_TLS_KEY are wrong: one line that names the variable to fix,
// within brewkit.DialTimeout. Without a CA on SECURE it is the CA; on MTLS
// without a certificate, the certificate; with one from another CA, its
// issuer; with an expired one, the date.
func requirePingNames(t *testing.T, secureAddr, mtlsAddr, caFile string, s tlsprobe.Stand) {
	t.Helper()
	dir := t.TempDir()
	files := func(name string, c tls.Certificate) (string, string) {
		certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		key, err := certs.KeyPEM(c.PrivateKey.(*ecdsa.PrivateKey))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(certFile, certs.CertPEM(c.Leaf), 0o644))
		require.NoError(t, os.WriteFile(keyFile, key, 0o600))
		return certFile, keyFile
	}
	partner, partnerKey := files("partner", s.Partner)
	stranger, strangerKey := files("stranger", s.Stranger)
	expired, expiredKey := files("expired", s.Expired)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		words []string // in the line; none: Ping passes
	}{
		{"SECURE, no CA", map[string]string{brewkit.EnvBootstrap: secureAddr, brewkit.EnvTLS: "1"},
			[]string{"x509: certificate signed by unknown authority", brewkit.EnvTLSCA}},
		{"MTLS, no certificate", map[string]string{brewkit.EnvBootstrap: mtlsAddr, brewkit.EnvTLSCA: caFile},
			[]string{"remote error: tls:", "wants a client certificate", brewkit.EnvTLSCert, brewkit.EnvTLSKey}},
		{"MTLS, another CA's", map[string]string{brewkit.EnvBootstrap: mtlsAddr, brewkit.EnvTLSCA: caFile,
			brewkit.EnvTLSCert: stranger, brewkit.EnvTLSKey: strangerKey},
			[]string{"remote error: tls:", "refused this client (", "issued by CN=Not the course CA", brewkit.EnvTLSCert}},
		{"MTLS, expired", map[string]string{brewkit.EnvBootstrap: mtlsAddr, brewkit.EnvTLSCA: caFile,
			brewkit.EnvTLSCert: expired, brewkit.EnvTLSKey: expiredKey},
			[]string{"remote error: tls:", "refused this client (", "expired on", brewkit.EnvTLSCert}},
		{"MTLS, the partner's", map[string]string{brewkit.EnvBootstrap: mtlsAddr, brewkit.EnvTLSCA: caFile,
			brewkit.EnvTLSCert: partner, brewkit.EnvTLSKey: partnerKey}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{brewkit.EnvSASL, brewkit.EnvUser, brewkit.EnvPassword, brewkit.EnvTLS,
				brewkit.EnvTLSCA, brewkit.EnvTLSCert, brewkit.EnvTLSKey} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := brewkit.FromEnv()
			require.NoError(t, err)
			cl, err := brewkit.NewClient(cfg)
			require.NoError(t, err)
			defer cl.Close()
			start := time.Now()
			err = brewkit.Ping(ctxFor(t, 20*time.Second), cfg, cl)
			t.Logf("%s: %v", time.Since(start).Round(time.Millisecond), err)
			require.Less(t, time.Since(start), brewkit.DialTimeout)
			if tc.words == nil {
				require.NoError(t, err)
				return
			}
			var tlsErr *brewkit.TLSError
			require.ErrorAs(t, err, &tlsErr)
			require.NotContains(t, err.Error(), "\n")
			for _, w := range tc.words {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// Fast tier: Ping's lines on the simulation (kfake's mTLS node is Go's TLS
// server, whose alerts differ from Kafka's; the lines name the same fix).
func TestPingNamesTheCertificateProblemOnTheSimulation(t *testing.T) {
	o := tlsprobe.Defaults
	s, ca := simStand(t, o)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, certs.CertPEM(ca), 0o644))
	requirePingNames(t, s.Secure, s.MTLS, caFile, s)
}

// Real tier: the same on the stand's secured listeners.
func TestPingNamesTheCertificateProblem(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx := ctxFor(t, time.Minute)
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	o := tlsprobe.Defaults
	o.Topic = env.FreshTopic(t, "tls-ping", 1)
	o.CN = "tls-ping-" + suffix(t)
	t.Cleanup(func() { removeClientCert(t, c, o.CN) })
	s, err := tlsprobe.Prepare(ctx, c, o)
	require.NoError(t, err)
	requirePingNames(t, strings.Join(c.SASL, ","), strings.Join(c.MTLS, ","), c.TLS.CA, s)
}
