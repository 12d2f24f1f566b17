package tlsprobe

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"regexp"
	"sync"
)

// relay is case 4b's man in the middle: it ends the client's TLS with a
// certificate of its own, opens its own TLS connection to the broker, and
// passes the bytes both ways, reading what the client sends in the clear.
type relay struct {
	ctx    context.Context
	cancel context.CancelFunc
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	user   string // the SCRAM user of the first login it read
}

// scramFirst is a SCRAM client-first message: "n,,n=USER,r=NONCE".
var scramFirst = regexp.MustCompile(`n,,n=([^,]*),r=`)

func startRelay(cert tls.Certificate, target string) (*relay, error) {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, target: target}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *relay) Addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		conn, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go r.serve(conn)
	}
}

func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.conns = append(r.conns, c)
	return true
}

func (r *relay) serve(client net.Conn) {
	defer r.wg.Done()
	defer client.Close()
	if !r.track(client) {
		return
	}
	// The relay does not care whom it talks to either.
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // the attacker's side
	broker, err := d.DialContext(r.ctx, "tcp", r.target)
	if err != nil {
		return
	}
	defer broker.Close()
	if !r.track(broker) {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(client, broker)
		client.Close()
		close(done)
	}()
	io.Copy(broker, io.TeeReader(client, &sniffer{r: r}))
	broker.Close()
	<-done
}

// sniffer reads the client's bytes for a SCRAM login.
type sniffer struct {
	r   *relay
	buf []byte
}

func (s *sniffer) Write(p []byte) (int, error) {
	if len(s.buf) < 1<<16 {
		s.buf = append(s.buf, p...)
		if m := scramFirst.FindSubmatch(s.buf); m != nil {
			s.r.mu.Lock()
			if s.r.user == "" {
				s.r.user = string(m[1])
			}
			s.r.mu.Unlock()
		}
	}
	return len(p), nil
}

// Close stops the relay and its connections, and returns the user whose
// login it read.
func (r *relay) Close() string {
	r.cancel()
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns, r.closed = nil, true
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.user
}
