package partner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Client calls the partner API.
type Client struct {
	Base string       // "http://127.0.0.1:18080"
	HTTP *http.Client // nil: one with Timeout
	// Timeout bounds one booking call (default 2 s): a partner that took the
	// booking and hangs is a timeout here.
	Timeout time.Duration
}

// NewClient returns a client of the partner at addr (host:port).
func NewClient(addr string) *Client { return &Client{Base: "http://" + addr} }

// Error is a booking call that failed: Retriable says whether the same call
// may succeed later (503, a timeout, a connection refused) or never will
// (400: the booking itself is wrong).
type Error struct {
	OrderID string
	Status  int // 0 when no answer came
	Msg     string
	Err     error // the transport's error, when no answer came
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("booking %s: no answer: %v", e.OrderID, e.Err)
	}
	return fmt.Sprintf("booking %s: %d %s", e.OrderID, e.Status, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retriable reports whether the call may succeed if made again.
func (e *Error) Retriable() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Retriable reports whether err is a booking failure worth retrying: a
// partner error that says so, or any error that is not a partner's answer
// (the context's own end is not: the caller gave up).
func Retriable(err error) bool {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Retriable()
	}
	return false
}

// Book books order id's delivery. key, when not empty, is the call's
// idempotency key: the partner books a key once, and answers a repeat with
// the first booking. It returns the booking id.
func (c *Client) Book(ctx context.Context, r Request, key string) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/bookings", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", ctx.Err()
		}
		return "", &Error{OrderID: r.OrderID, Err: err}
	}
	defer resp.Body.Close()
	var a Answer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil {
		return "", &Error{OrderID: r.OrderID, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return "", &Error{OrderID: r.OrderID, Status: resp.StatusCode, Msg: a.Error}
	}
	return a.BookingID, nil
}

// SetFaults switches the partner's faults (PUT /faults) and returns them as
// the partner holds them.
func (c *Client) SetFaults(ctx context.Context, f Faults) (Faults, error) {
	var got Faults
	err := c.call(ctx, http.MethodPut, "/faults", f, &got)
	return got, err
}

// Log returns the partner's booking log.
func (c *Client) Log(ctx context.Context) (Log, error) {
	var l Log
	err := c.call(ctx, http.MethodGet, "/bookings", nil, &l)
	return l, err
}

// Reset empties the partner's log and switches its faults off.
func (c *Client) Reset(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "/reset", nil, nil)
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("the partner at %s does not answer (`make partner` runs it): %w", c.Base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var a Answer
		json.NewDecoder(resp.Body).Decode(&a) //nolint:errcheck // the status says enough
		return fmt.Errorf("partner %s %s: %d %s", method, path, resp.StatusCode, a.Error)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// Running is a partner this process started (Ensure).
type Running struct {
	Server *Server
	srv    *http.Server
}

// Close stops a partner this process started.
func (r *Running) Close() error {
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// Listen serves a new partner on addr ("127.0.0.1:0" for any free port) until
// Close, and returns it with the address it listens on.
func Listen(addr string) (*Running, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("the partner cannot listen on %s: %w", addr, err)
	}
	s := New()
	r := &Running{Server: s, srv: &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}}
	go r.srv.Serve(ln) //nolint:errcheck // ends with Close
	return r, ln.Addr().String(), nil
}

// Ensure returns a client of the partner at addr. When none answers there it
// starts one in this process and returns it too (nil when one was running):
// a demo works with or without `make partner` in another terminal. Port 0
// always starts one, on a free port.
func Ensure(ctx context.Context, addr string) (*Client, *Running, error) {
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
		c := NewClient(addr)
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if c.call(ctx, http.MethodGet, "/healthz", nil, nil) == nil {
			return c, nil, nil
		}
	}
	r, at, err := Listen(addr)
	if err != nil {
		return nil, nil, err
	}
	return NewClient(at), r, nil
}
