package brewkit

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The errors of a cluster that answers, but not the way this client asks:
// each says what happened and what to change. Ping returns them; a start
// stand is the fix only for unreachableError.

// LoginError says the cluster wants a SASL login the client did not give, or
// refused the one it gave.
type LoginError struct {
	Bootstrap string
	Cfg       Config
	Offers    []string // the mechanisms the cluster offers, when known
	Err       error    // the broker's answer to a login it refused
}

func (e *LoginError) Error() string {
	offers := ""
	if len(e.Offers) > 0 {
		offers = " (it offers " + strings.Join(e.Offers, ", ") + ")"
	}
	switch {
	case e.Cfg.SASL == "":
		return fmt.Sprintf("Kafka at %s wants a SASL login%s: set %s, %s and %s",
			e.Bootstrap, offers, EnvSASL, EnvUser, EnvPassword)
	case errors.Is(e.Err, kerr.UnsupportedSaslMechanism):
		return fmt.Sprintf("Kafka at %s does not offer %s=%s%s: set %s to one it offers",
			e.Bootstrap, EnvSASL, e.Cfg.SASL, offers, EnvSASL)
	}
	return fmt.Sprintf("Kafka at %s refused the SASL login of %s=%s with %s (%v): check %s and %s",
		e.Bootstrap, EnvUser, e.Cfg.User, e.Cfg.SASL, e.Err, EnvUser, EnvPassword)
}

func (e *LoginError) Unwrap() error { return e.Err }

// TLSError says the TLS handshake failed, or that the cluster speaks TLS to
// a client that does not.
type TLSError struct {
	Addr string
	Cfg  Config
	Err  error // the handshake's failure; nil when the client did not try TLS
}

func (e *TLSError) Error() string {
	if !e.Cfg.TLS {
		return fmt.Sprintf("Kafka at %s speaks TLS: set %s=1", e.Addr, EnvTLS)
	}
	var verify *tls.CertificateVerificationError
	if _, ok := errors.AsType[x509.HostnameError](e.Err); ok {
		return fmt.Sprintf("the TLS handshake with %s failed: %v: the broker's certificate is not for the name this client dialled; put a name it is valid for in %s", e.Addr, e.Err, EnvBootstrap)
	}
	if errors.As(e.Err, &verify) {
		return fmt.Sprintf("the TLS handshake with %s failed: %v: this client does not trust the broker's certificate (set %s to its CA's PEM file, .stand/tls/ca.pem on the course stand)", e.Addr, e.Err, EnvTLSCA)
	}
	if certificateAlert(e.Err) {
		var certs []tls.Certificate
		if e.Cfg.TLSConfig != nil {
			certs = e.Cfg.TLSConfig.Certificates
		}
		if len(certs) == 0 || len(certs[0].Certificate) == 0 {
			return fmt.Sprintf("the broker at %s refused this client (%v): it wants a client certificate (mutual TLS); set %s and %s to one its CA signed", e.Addr, e.Err, EnvTLSCert, EnvTLSKey)
		}
		leaf := certs[0].Leaf
		if leaf == nil {
			var err error
			if leaf, err = x509.ParseCertificate(certs[0].Certificate[0]); err != nil {
				return fmt.Sprintf("the broker at %s refused this client's certificate (%v): %s: %v", e.Addr, e.Err, EnvTLSCert, err)
			}
		}
		valid := "valid until " + leaf.NotAfter.Format(time.DateOnly)
		if time.Now().After(leaf.NotAfter) {
			valid = "expired on " + leaf.NotAfter.Format(time.DateOnly)
		}
		return fmt.Sprintf("the broker at %s refused this client (%v): %s is %s, issued by %s, %s; it wants one its CA signed, valid now",
			e.Addr, e.Err, EnvTLSCert, leaf.Subject, leaf.Issuer, valid)
	}
	return fmt.Sprintf("the TLS handshake with %s failed (%v): it does not speak TLS there; unset %s, or point %s at the cluster's TLS listener",
		e.Addr, e.Err, EnvTLS, EnvBootstrap)
}

func (e *TLSError) Unwrap() error { return e.Err }

// notAnsweringError says a broker accepts connections but answers no request:
// a paused node, or one too busy to serve.
type notAnsweringError struct {
	Bootstrap string
	Waited    time.Duration
	Err       error
}

func (e *notAnsweringError) Error() string {
	return fmt.Sprintf("Kafka at %s accepts connections but answered nothing within %s (%v): is a node paused or overloaded? `make status` shows the nodes",
		e.Bootstrap, e.Waited, e.Err)
}

func (e *notAnsweringError) Unwrap() error { return e.Err }

// probeWait bounds each of diagnose's own requests.
const probeWait = 2 * time.Second

// diagnose finds why a broker at addr, which accepts TCP connections, does
// not serve this client: a TLS mismatch, a login wanted or refused. It
// returns nil when it finds nothing wrong with the way the client connects.
func diagnose(ctx context.Context, cfg Config, addr string, pingErr error) error {
	bootstrap := cfg.Bootstrap()
	switch {
	case errors.Is(pingErr, kerr.SaslAuthenticationFailed), errors.Is(pingErr, kerr.UnsupportedSaslMechanism):
		offers, _ := saslMechanisms(ctx, cfg, addr)
		return &LoginError{Bootstrap: bootstrap, Cfg: cfg, Offers: offers, Err: pingErr}
	}
	if cfg.TLS {
		conn, err := dialProbe(ctx, cfg, addr)
		if err == nil {
			conn.Close()
			// Under TLS 1.3 the client's handshake returns before the
			// server has checked the client's certificate: a refusal
			// comes as an alert with the first reply.
			if _, err = probeRequest(ctx, cfg, addr, apiVersionsRequest()); !certificateAlert(err) {
				err = nil
			}
		}
		if err != nil {
			return &TLSError{Addr: addr, Cfg: cfg, Err: err}
		}
	} else if !speaksKafka(ctx, addr) && speaksTLS(ctx, addr) {
		return &TLSError{Addr: addr, Cfg: cfg}
	}
	offers, err := saslMechanisms(ctx, cfg, addr)
	if err != nil || len(offers) == 0 || servesWithoutLogin(ctx, cfg, addr) {
		return nil // no login wanted there: the failure is elsewhere
	}
	switch {
	case cfg.SASL == "":
		return &LoginError{Bootstrap: bootstrap, Cfg: cfg, Offers: offers}
	case !slices.Contains(offers, cfg.SASL):
		return &LoginError{Bootstrap: bootstrap, Cfg: cfg, Offers: offers, Err: kerr.UnsupportedSaslMechanism}
	case pingErr != nil:
		// The cluster wants a login, offers this mechanism, and dropped
		// the client: a broker closes the connection of a login it refuses.
		return &LoginError{Bootstrap: bootstrap, Cfg: cfg, Offers: offers, Err: pingErr}
	}
	return nil
}

// dialProbe opens a connection to addr the way cfg says: TLS or not.
func dialProbe(ctx context.Context, cfg Config, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	if cfg.TLS {
		d := tls.Dialer{Config: cfg.tlsConfig()}
		return d.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// speaksKafka reports whether addr answers an ApiVersions request in plain
// text, as every Kafka listener without TLS does before any login. It is
// asked before speaksTLS: a TLS handshake's first bytes, read by such a
// listener as the size of a request, are 352 MB (Kafka refuses it; a
// simulated broker may try to read it).
func speaksKafka(ctx context.Context, addr string) bool {
	_, err := probeRequest(ctx, Config{}, addr, apiVersionsRequest())
	return err == nil
}

func apiVersionsRequest() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "brew-course", "1"
	return req
}

// certificateAlert reports whether err is a TLS alert by which the server
// refused the client's certificate, or the lack of one ("remote error: tls:
// bad certificate").
func certificateAlert(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	if !ok || op.Op != "remote error" || op.Err == nil {
		return false
	}
	switch op.Err.Error() {
	case "tls: bad certificate", "tls: unsupported certificate", "tls: revoked certificate",
		"tls: expired certificate", "tls: unknown certificate", "tls: unknown certificate authority",
		"tls: certificate required", "tls: access denied":
		return true
	}
	return false
}

// speaksTLS reports whether addr completes a TLS handshake.
func speaksTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only asks whether it speaks TLS at all
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// saslMechanisms asks addr, before any login, which SASL mechanisms it
// offers. A listener without SASL refuses the question (ILLEGAL_SASL_STATE)
// or, like the simulation, lists mechanisms it does not require:
// servesWithoutLogin tells those apart.
func saslMechanisms(ctx context.Context, cfg Config, addr string) ([]string, error) {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = "BREW-COURSE-ASKS" // no such mechanism: the answer lists the ones there are
	kresp, err := probeRequest(ctx, cfg, addr, req)
	if err != nil {
		return nil, err
	}
	return kresp.(*kmsg.SASLHandshakeResponse).SupportedMechanisms, nil
}

// servesWithoutLogin reports whether addr answers a metadata request on a
// connection that did not log in.
func servesWithoutLogin(ctx context.Context, cfg Config, addr string) bool {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 4
	req.Topics = []kmsg.MetadataRequestTopic{}
	_, err := probeRequest(ctx, cfg, addr, req)
	return err == nil
}

// probeRequest sends req (a version without flexible headers) on a new
// connection to addr and reads its response, within probeWait.
func probeRequest(ctx context.Context, cfg Config, addr string, req kmsg.Request) (kmsg.Response, error) {
	conn, err := dialProbe(ctx, cfg, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(probeWait)); err != nil {
		return nil, err
	}
	const correlationID = 1
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("brew-course"))
	if _, err := conn.Write(f.AppendRequest(nil, req, correlationID)); err != nil {
		return nil, err
	}
	r := bufio.NewReader(conn)
	var size int32
	if err := binary.Read(r, binary.BigEndian, &size); err != nil {
		return nil, err
	}
	if size < 4 || size > 1<<20 {
		return nil, fmt.Errorf("a response of %d bytes: not Kafka", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	if binary.BigEndian.Uint32(body) != correlationID {
		return nil, errors.New("a response to another request: not Kafka")
	}
	resp := req.ResponseKind()
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, err
	}
	return resp, nil
}
