package brewkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// RunChild runs a child program (see Command) to its end, each line of its
// stdout handed to say. died says it ended by SIGKILL (see Crashed): the
// drills that kill a service mid-run count on that. Anything else it wrote
// to stderr follows on the caller's stderr. When it fails, the error is its
// own one line on stderr ("kitchen: ..."), not that line and "exit status 1"
// after it; a longer story goes to stderr and the error says what failed.
func RunChild(ctx context.Context, cfg Config, what string, command []string, say func(string), args ...string) (died bool, err error) {
	cmd := Command(ctx, cfg, command, args...)
	out := &lineWriter{say: say}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	err = cmd.Run()
	out.flush()
	switch {
	case Crashed(err):
		died = true
	case err != nil:
		if msg := strings.TrimSpace(stderr.String()); msg != "" && !strings.Contains(msg, "\n") {
			return false, errors.New(msg)
		}
		os.Stderr.Write(stderr.Bytes()) //nolint:errcheck // best effort
		return false, fmt.Errorf("%s failed: %w", what, err)
	}
	os.Stderr.Write(stderr.Bytes()) //nolint:errcheck // nothing, as a rule
	return died, nil
}

// lineWriter hands each line written to it to say.
type lineWriter struct {
	say func(string)
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.say(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

// flush hands over a last line with no newline.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		l.say(string(l.buf))
		l.buf = nil
	}
}
