package brewtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// BuildCmd compiles the command in the test's working directory (a cmd/X
// package) and returns the binary's path.
func BuildCmd(t testing.TB) string {
	t.Helper()
	return BuildCmdAt(t, ".")
}

// BuildCmdAt compiles the command in dir and returns the binary's path. A
// test process builds each command once: linking one takes a second or two
// of CPU, and a lecture's flag tests run its programs dozens of times.
func BuildCmdAt(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	built.Lock()
	defer built.Unlock()
	if bin, ok := built.bins[abs]; ok {
		return bin
	}
	if bin, err := sharedBinary(abs); err != nil {
		t.Fatal(err)
	} else if bin != "" {
		built.bins[abs] = bin
		return bin
	}
	if bin := cachedBinary(abs); bin != "" {
		built.bins[abs] = bin
		return bin
	}
	if built.dir == "" {
		if built.dir, err = binDir(); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(built.dir, fmt.Sprintf("%d-%s", len(built.bins), filepath.Base(abs)))
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	built.bins[abs] = bin
	return bin
}

// cachedBinary returns the command in dir as the go command's build cache
// holds it, or "" when it cannot. Since Go 1.24 `go run` keeps the programs
// it links in the build cache, so a program unchanged since the last test
// run is not linked again (`go build -o` always links): -exec echo prints
// where the binary is instead of running it. The first run after a change
// links into a temporary folder, which go run removes: the second finds
// the binary in the cache.
func cachedBinary(dir string) string {
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil || len(bytes.TrimSpace(cache)) == 0 {
		return ""
	}
	for range 2 {
		cmd := exec.Command("go", "run", "-exec", "echo", ".")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		bin := string(bytes.TrimSpace(out))
		if strings.HasPrefix(bin, string(bytes.TrimSpace(cache))+string(filepath.Separator)) {
			return bin
		}
	}
	return ""
}

// sharedBinary returns the command in dir as the test tiers keep it, linking
// it when it is not there yet, or "" when they keep none. The tiers
// (scripts/test) set BREW_TESTBIN; when the checkout is also a clean git
// tree, a command is kept under BREW_TESTBIN/cmds by the tree's hash, the
// Go toolchain, GOFLAGS and its folder, so the test processes of a tier,
// the tiers of a CI run and the next run of the same code link it once
// and ask go nothing (go run -exec echo costs 0.25 CPU-seconds a test
// process and command, and a CI run builds commands hundreds of times).
func sharedBinary(dir string) (string, error) {
	keep := os.Getenv("BREW_TESTBIN")
	if keep == "" {
		return "", nil
	}
	root := dir
	for !isFile(filepath.Join(root, "go.work")) {
		if filepath.Dir(root) == root {
			return "", nil
		}
		root = filepath.Dir(root)
	}
	tree, gover := cleanTree(root)
	if tree == "" {
		return "", nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return "", nil
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{tree, gover, "GOFLAGS=" + os.Getenv("GOFLAGS"), rel}, "\n")))
	bin := filepath.Join(keep, "cmds", hex.EncodeToString(sum[:8]), filepath.Base(dir))
	if isFile(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// Go's build cache holds the command when nothing it is made of changed
	// since it was last linked (cachedBinary): a new commit relinks only
	// what it changed. It goes in beside its place and is renamed: another
	// test process may put the same command there at once, and a reader
	// never sees half a binary.
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	if cached := cachedBinary(dir); cached == "" || os.Link(cached, tmp) != nil {
		cmd := exec.Command("go", "build", "-o", tmp, ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("go build %s: %v\n%s", dir, err, out)
		}
	}
	return bin, os.Rename(tmp, bin)
}

var shared struct {
	once        sync.Once
	tree, gover string
}

// cleanTree is the hash of root's git tree and the Go version when nothing
// in the checkout differs from HEAD (ignored files aside), else "". It is
// read once a test process.
func cleanTree(root string) (tree, gover string) {
	shared.once.Do(func() {
		st, err := exec.Command("git", "-C", root, "status", "--porcelain").Output()
		if err != nil || len(bytes.TrimSpace(st)) > 0 {
			return
		}
		h, err := exec.Command("git", "-C", root, "rev-parse", "HEAD^{tree}").Output()
		if err != nil {
			return
		}
		v, err := exec.Command("go", "env", "GOVERSION").Output()
		if err != nil {
			return
		}
		shared.tree, shared.gover = strings.TrimSpace(string(h)), strings.TrimSpace(string(v))
	})
	return shared.tree, shared.gover
}

// built are the commands this test process has built, by folder.
var built = struct {
	sync.Mutex
	dir  string
	bins map[string]string
}{bins: map[string]string{}}

// binDir makes this test process's folder for the commands it builds, in
// the system's temporary folder, and removes those of test processes that
// have ended (a test binary has no hook to remove its own at exit).
func binDir() (string, error) {
	const prefix = "brewtest-bin-"
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, d := range old {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), prefix))
		if err == nil && syscall.Kill(pid, 0) != nil {
			os.RemoveAll(d)
		}
	}
	dir := filepath.Join(os.TempDir(), prefix+strconv.Itoa(os.Getpid()))
	return dir, os.MkdirAll(dir, 0o755)
}

// BadFlag runs the program in dir (cmd/X) with args and fails the test
// unless it exits 2 with a first line naming the program, the flag and its
// value: "X: -flag value: why".
func BadFlag(t *testing.T, dir string, args ...string) {
	t.Helper()
	bin := BuildCmdAt(t, dir)
	_, stderr, code := RunCmd(t, bin, "127.0.0.1:1", args...)
	want := filepath.Base(dir) + ": " + args[len(args)-2] + " " + brewkit.FlagValue(args[len(args)-1]) + ": "
	if code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("%s %q: exit %d, want 2 and a first line starting %q; stderr:\n%s", dir, args, code, want, stderr)
	}
}

// RunCmd runs bin with args and KAFKA_BOOTSTRAP=bootstrap (none when empty),
// and returns its stdout, stderr and exit code.
func RunCmd(t testing.TB, bin, bootstrap string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	if bootstrap != "" {
		cmd.Env = append(cmd.Env, "KAFKA_BOOTSTRAP="+bootstrap)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return o.String(), e.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

var topicName = regexp.MustCompile(`brew\.[\w.-]*\w`)

// blankNames blanks topic and group names (brew.…), which tests choose fresh.
func blankNames(s string) string { return topicName.ReplaceAllString(s, "NAME") }

// Running is a program a test started in the background.
type Running struct {
	cmd              *exec.Cmd
	out, errOut, all lockedBuffer
	done             chan struct{}
	code             int
}

// Start starts bin with args and KAFKA_BOOTSTRAP=bootstrap; the test's end
// kills it if it still runs.
func Start(t testing.TB, bin, bootstrap string, args ...string) *Running {
	t.Helper()
	r := &Running{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+bootstrap)
	r.cmd.Stdout, r.cmd.Stderr = io.MultiWriter(&r.out, &r.all), io.MultiWriter(&r.errOut, &r.all)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			r.code = exit.ExitCode()
		} else if err != nil {
			r.code = -1
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill() //nolint:errcheck // gone already when it ended
		<-r.done
	})
	return r
}

// Stdout, Stderr and Output (both, interleaved) return what it printed so far.
func (r *Running) Stdout() string { return r.out.String() }
func (r *Running) Stderr() string { return r.errOut.String() }
func (r *Running) Output() string { return r.all.String() }

// signal sends sig to the program.
func (r *Running) signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Wait waits up to limit for the program to exit and returns its status.
func (r *Running) Wait(t testing.TB, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(limit):
		t.Fatalf("the program did not exit within %s\noutput:\n%s", limit, r.Output())
		return 0
	}
}

// Interrupted is what a program did after Ctrl-C.
type Interrupted struct {
	Stdout, Stderr string
	Code           int           // exit status
	Took           time.Duration // from SIGINT to exit
}

// Interrupt starts bin with args and KAFKA_BOOTSTRAP=bootstrap, waits until
// its output (stdout and stderr together) satisfies ready, sends SIGINT and
// waits for it to exit. It fails the test unless the program exits with
// status 130 within brewkit.StopGrace and a margin for this machine.
func Interrupt(t testing.TB, bin, bootstrap string, ready func(output string) bool, args ...string) Interrupted {
	t.Helper()
	r := Start(t, bin, bootstrap, args...)
	Eventually(t, time.Minute, "the program to get going", func() (bool, string) {
		s := r.Output()
		return ready(s), s
	})
	r.signal(t, os.Interrupt)
	sent := time.Now()
	limit := brewkit.StopGrace + 500*time.Millisecond
	code := r.Wait(t, time.Minute)
	res := Interrupted{Stdout: r.Stdout(), Stderr: r.Stderr(), Code: code, Took: time.Since(sent)}
	if res.Code != 130 {
		t.Fatalf("after Ctrl-C: exit status %d, want 130\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if res.Took > limit {
		t.Fatalf("after Ctrl-C the program took %s to exit, over %s", res.Took, limit)
	}
	return res
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// FetchFails runs the program bin against a simulated cluster on which every
// fetch fails with TOPIC_AUTHORIZATION_FAILED (as when a consumer's read
// permission is revoked), and fails the test unless the program says so in one
// line and exits 1 within limit, instead of waiting or printing zero counts.
func FetchFails(t testing.TB, limit time.Duration, bin string, args ...string) {
	t.Helper()
	env := Sim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := brewkit.EnsureTopics(ctx, env.Admin(t), brewkit.Catalog...); err != nil {
		t.Fatal(err) // as on a stand where lecture 02 ran
	}
	env.Sim.FailFetches(kerr.TopicAuthorizationFailed)
	start := time.Now()
	stdout, stderr, code := RunCmd(t, bin, env.Config.Bootstrap(), args...)
	took := time.Since(start)
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("with every fetch refused: exit %d, want 1 and one line naming TOPIC_AUTHORIZATION_FAILED\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if took > limit {
		t.Fatalf("with every fetch refused the program took %s to say so, over %s", took.Round(time.Millisecond), limit)
	}
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
