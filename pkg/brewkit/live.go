package brewkit

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Live shows a view that changes over time. On a terminal each frame redraws
// the screen in place; when the output is piped or redirected, a frame is
// printed as plain lines under a timestamp, and only when it changed, so logs
// stay readable.
type Live struct {
	w    io.Writer
	tty  bool
	last string
	now  func() time.Time
}

// NewLive returns a Live writing to w. Redrawing in place happens only when w
// is a terminal.
func NewLive(w io.Writer) *Live {
	return &Live{w: w, tty: IsTerminal(w), now: time.Now}
}

// IsTerminal reports whether w is a character device such as a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Frame shows frame, a whole view ending in a newline.
func (l *Live) Frame(frame string) {
	if l.tty {
		// Cursor home, draw, clear whatever the previous frame left below.
		fmt.Fprint(l.w, "\x1b[H\x1b[2J"+frame)
		l.last = frame
		return
	}
	if frame == l.last {
		return
	}
	l.last = frame
	fmt.Fprintf(l.w, "--- %s\n%s", l.now().Format("15:04:05"), frame)
}
