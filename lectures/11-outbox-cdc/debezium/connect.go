package debezium

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// EnvConnect overrides the Kafka Connect worker's REST address.
const EnvConnect = "BREW_CONNECT_URL"

// DefaultConnect is the stand's connect service (stand.ConnectPort).
const DefaultConnect = "http://127.0.0.1:18083"

// ConnectURL is the worker to use: BREW_CONNECT_URL, else the stand's.
func ConnectURL() string {
	if u := os.Getenv(EnvConnect); u != "" {
		return strings.TrimRight(u, "/")
	}
	return DefaultConnect
}

// Connect is a client of Kafka Connect's REST API.
type Connect struct {
	URL string
	cl  http.Client
}

// NewConnect is a client of the worker at base.
func NewConnect(base string) *Connect {
	return &Connect{URL: strings.TrimRight(base, "/"), cl: http.Client{Timeout: 30 * time.Second}}
}

// Host is the worker's host:port, for messages.
func (c *Connect) Host() string {
	if u, err := url.Parse(c.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return c.URL
}

// do sends method path with body (JSON, when not nil) and decodes a JSON
// answer into out (when not nil). A status not in ok is an error with the
// worker's message.
func (c *Connect) do(ctx context.Context, method, path string, body, out any, ok ...int) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.cl.Do(req)
	if err != nil {
		return 0, fmt.Errorf("Kafka Connect at %s does not answer (`make services` starts it): %w", c.Host(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			if out != nil && len(b) > 0 {
				if err := json.Unmarshal(b, out); err != nil {
					return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
				}
			}
			return resp.StatusCode, nil
		}
	}
	var e struct {
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
}

// Put creates the connector name with config, or updates it
// (PUT /connectors/NAME/config).
func (c *Connect) Put(ctx context.Context, name string, config map[string]string) error {
	_, err := c.do(ctx, http.MethodPut, "/connectors/"+url.PathEscape(name)+"/config", config, nil, http.StatusOK, http.StatusCreated)
	return err
}

// Status is GET /connectors/NAME/status.
type Status struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Version  string `json:"version"`
	} `json:"connector"`
	Tasks []struct {
		ID    int    `json:"id"`
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"tasks"`
}

// Running reports whether the connector and all its tasks (at least one)
// run; failed is the first failed task's trace's first line.
func (s Status) Running() (running bool, failed string) {
	if s.Connector.State == "FAILED" {
		return false, "the connector FAILED"
	}
	for _, t := range s.Tasks {
		if t.State == "FAILED" {
			line, _, _ := strings.Cut(t.Trace, "\n")
			return false, fmt.Sprintf("task %d FAILED: %s", t.ID, line)
		}
	}
	if s.Connector.State != "RUNNING" || len(s.Tasks) == 0 {
		return false, ""
	}
	for _, t := range s.Tasks {
		if t.State != "RUNNING" {
			return false, ""
		}
	}
	return true, ""
}

// Say is the status in one line: RUNNING, task 0 RUNNING.
func (s Status) Say() string {
	parts := []string{"connector " + s.Connector.State}
	for _, t := range s.Tasks {
		parts = append(parts, fmt.Sprintf("task %d %s", t.ID, t.State))
	}
	return strings.Join(parts, ", ")
}

// Status reads the connector's state; found is false when there is no
// such connector.
func (c *Connect) Status(ctx context.Context, name string) (st Status, found bool, err error) {
	code, err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil, &st, http.StatusOK, http.StatusNotFound)
	return st, code == http.StatusOK, err
}

// WaitRunning waits until the connector and its tasks run, at most limit; a
// failed task fails it at once with its trace's first line.
func (c *Connect) WaitRunning(ctx context.Context, name string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last := "no answer"
	for {
		st, found, err := c.Status(ctx, name)
		switch {
		case err != nil:
			last = err.Error()
		case !found:
			last = "no such connector yet"
		default:
			ok, failed := st.Running()
			if ok {
				return nil
			}
			if failed != "" {
				return fmt.Errorf("connector %s: %s", name, failed)
			}
			last = st.Say()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("connector %s did not run within %s: %s", name, limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Offset is one source partition's offset, as GET /connectors/NAME/offsets
// shows it.
type Offset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// Offsets is GET /connectors/NAME/offsets: the positions Connect stored for
// the connector in its offsets topic.
func (c *Connect) Offsets(ctx context.Context, name string) ([]Offset, error) {
	var out struct {
		Offsets []Offset `json:"offsets"`
	}
	_, err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/offsets", nil, &out, http.StatusOK)
	return out.Offsets, err
}

// Remove deletes the connector for good: stops it (PUT .../stop), deletes
// its offsets (DELETE .../offsets, allowed once it is stopped), deletes it.
// A connector of the same name registered later starts afresh. No
// connector of that name: nothing to do.
func (c *Connect) Remove(ctx context.Context, name string) error {
	p := "/connectors/" + url.PathEscape(name)
	code, err := c.do(ctx, http.MethodPut, p+"/stop", nil, nil, http.StatusAccepted, http.StatusNoContent, http.StatusOK, http.StatusNotFound)
	if err != nil || code == http.StatusNotFound {
		return err
	}
	// The stop is asynchronous: offsets may be deleted once it is STOPPED.
	var last error
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, last = c.do(ctx, http.MethodDelete, p+"/offsets", nil, nil, http.StatusOK)
		if last == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if last != nil {
		return last
	}
	if _, err = c.do(ctx, http.MethodDelete, p, nil, nil, http.StatusNoContent, http.StatusOK, http.StatusNotFound); err != nil {
		return err
	}
	// The delete goes through Connect's configs topic: gone once the
	// worker read it back.
	err = brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		_, found, err := c.Status(ctx, name)
		return err == nil && !found
	})
	if err != nil {
		return fmt.Errorf("connector %s still listed 30 s after DELETE", name)
	}
	return nil
}
