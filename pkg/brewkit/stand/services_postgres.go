package stand

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PostgresPort is where PostgreSQL listens (lecture 11), on 127.0.0.1 only.
const PostgresPort = 15432

// PostgresDSN connects to the course's PostgreSQL as its superuser, with no
// password (trust on 127.0.0.1).
const PostgresDSN = "postgres://postgres@127.0.0.1:15432/postgres?sslmode=disable"

var postgresService = Service{
	Name:    "postgres",
	Port:    PostgresPort,
	What:    "PostgreSQL 15 with logical decoding (wal_level=logical), user postgres, trust on 127.0.0.1",
	Lecture: "lecture 11",
	Image:   "postgres:15",
	ReadyIn: 30 * time.Second,
	ready:   func(ctx context.Context) error { return pgAccepts(ctx, "127.0.0.1:15432") },
	host:    func(s *Stand) process { return newPostgres(s) },
}

// pgBinDir holds Debian's PostgreSQL 15 programs (package postgresql-15).
var pgBinDir = "/usr/lib/postgresql/15/bin"

// pgUser is the system user PostgreSQL runs as when the stand runs as root:
// PostgreSQL refuses to run as root.
const pgUser = "postgres"

// postgres runs Debian's PostgreSQL 15 on a data folder of its own,
// .stand/services/postgres/data, with its socket in .../run.
type postgres struct{ hostProc }

func newPostgres(s *Stand) *postgres {
	p := &postgres{hostProc{s: s, name: "postgres", stopBy: syscall.SIGINT, grace: 30 * time.Second}}
	// SIGINT is PostgreSQL's fast shutdown: SIGTERM (smart) would wait for
	// every client, and a Connect worker never lets go.
	p.marker = p.dataDir()
	return p
}

func (p *postgres) dataDir() string { return filepath.Join(p.home(), "data") }
func (p *postgres) sockDir() string { return filepath.Join(p.home(), "run") }

// home is the folder of PostgreSQL's own files (data, socket). It is the
// service's folder under .stand, unless the stand runs as root and the
// postgres user cannot enter the checkout (a clone under /root, mode 0700):
// then a folder of /var/tmp named after the checkout, which reset wipes too.
func (p *postgres) home() string {
	if os.Geteuid() != 0 {
		return p.dir()
	}
	u, err := user.Lookup(pgUser)
	if err != nil {
		return p.dir()
	}
	cred := credential(u)
	if traversable(filepath.Dir(p.dir()), int(cred.Uid), cred.Gid, cred.Groups) == nil {
		return p.dir()
	}
	return filepath.Join("/var/tmp", "brew-course-"+shortHash(p.s.Root), "postgres")
}

// shortHash names a folder after a path.
func shortHash(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s)) //nolint:errcheck // a hash does not fail
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}
func (p *postgres) bin(name string) string {
	return filepath.Join(pgBinDir, name)
}

func (p *postgres) installed() (bool, string) {
	if isFile(p.bin("postgres")) {
		return true, "PostgreSQL 15 (" + pgBinDir + ")"
	}
	return false, "Debian's postgresql, installed on first use (scripts/packages install postgresql, as root)"
}

func (p *postgres) install(ctx context.Context) error {
	if err := p.s.packages(ctx, "PostgreSQL 15 (Debian's postgresql)", "postgresql"); err != nil {
		return err
	}
	if !isFile(p.bin("postgres")) {
		return fmt.Errorf("postgresql is installed but %s is missing: this stand runs PostgreSQL 15", p.bin("postgres"))
	}
	return nil
}

// runAs is who PostgreSQL runs as: nil for the user the stand runs as, or
// the postgres system user when that is root (created when missing).
func (p *postgres) runAs(ctx context.Context) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(pgUser)
	if err != nil {
		p.s.say("stand: creating the system user %s (PostgreSQL refuses to run as root)", pgUser)
		out, err := exec.CommandContext(ctx, "useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", pgUser).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("creating the user %s to run PostgreSQL as (it refuses root): %v: %s", pgUser, err, bytes.TrimSpace(out))
		}
		if u, err = user.Lookup(pgUser); err != nil {
			return nil, err
		}
	}
	return credential(u), nil
}

// credential is what a child process needs to run as u.
func credential(u *user.User) *syscall.Credential {
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
}

func (p *postgres) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(p.bin(name), args...)
	cmd.Dir = p.home()
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

func (p *postgres) start(ctx context.Context) error {
	cred, err := p.runAs(ctx)
	if err != nil {
		return err
	}
	if cred != nil {
		if home := p.home(); home != p.dir() {
			p.s.say("stand: the user %s cannot enter this checkout, so PostgreSQL keeps its data in %s", pgUser, home)
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
		}
		if err := traversable(p.home(), int(cred.Uid), cred.Gid, cred.Groups); err != nil {
			return fmt.Errorf("PostgreSQL runs as the user %s (it refuses root), and %v", pgUser, err)
		}
	}
	if err := p.initdb(ctx, cred); err != nil {
		return err
	}
	if err := p.writeConfig(cred); err != nil {
		return err
	}
	// Not CommandContext: PostgreSQL must outlive this command.
	return p.detach(p.command(cred, "postgres", "-D", p.dataDir()))
}

// initdb creates the cluster's data folder once: superuser postgres, trust
// authentication, UTF8.
func (p *postgres) initdb(ctx context.Context, cred *syscall.Credential) error {
	for _, dir := range []string{p.dataDir(), p.sockDir(), filepath.Dir(p.logFile())} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := chownTo(dir, cred); err != nil {
			return err
		}
	}
	if isFile(filepath.Join(p.dataDir(), "PG_VERSION")) {
		return nil
	}
	p.s.say("stand: initializing PostgreSQL's data folder %s (once)", p.s.rel(p.dataDir()))
	cmd := p.command(cred, "initdb", "-D", p.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C")
	out, err := runWithin(ctx, cmd, time.Minute)
	if err != nil {
		os.RemoveAll(p.dataDir())
		return fmt.Errorf("initdb failed (%v): %s", err, lastLine(out))
	}
	conf := filepath.Join(p.dataDir(), "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n# The course stand's settings (rewritten at every start):\ninclude '%s'\n", pgBrewConf)
	return err
}

const pgBrewConf = "brew.conf"

// writeConfig writes brew.conf (included by postgresql.conf) and pg_hba.conf
// at every start, so a checkout's newer settings apply.
func (p *postgres) writeConfig(cred *syscall.Credential) error {
	for name, text := range map[string]string{
		pgBrewConf:    postgresConf(PostgresPort, p.sockDir()),
		"pg_hba.conf": postgresHBA,
	} {
		path := filepath.Join(p.dataDir(), name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
		if err := chownTo(path, cred); err != nil {
			return err
		}
	}
	return nil
}

// postgresConf is what the course sets beyond initdb's defaults: loopback
// only, its port, the socket in the stand's folder, and logical decoding for
// lecture 11's outbox and CDC (Debezium's pgoutput slot, a pglogrepl client).
func postgresConf(port int, sockDir string) string {
	return fmt.Sprintf(`# Written by the course stand (pkg/brewkit/stand) at every start.
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_connections = 50
shared_buffers = 64MB
log_destination = 'stderr'
log_line_prefix = '%%m [%%p] '
`, port, strings.ReplaceAll(sockDir, "'", "''"))
}

// postgresHBA trusts every connection from 127.0.0.1 and the socket,
// replication (physical or logical, as Debezium opens) included.
const postgresHBA = `# Written by the course stand (pkg/brewkit/stand): trust on this machine only.
# TYPE  DATABASE     USER  ADDRESS       METHOD
local   all          all                 trust
local   replication  all                 trust
host    all          all   127.0.0.1/32  trust
host    replication  all   127.0.0.1/32  trust
`

func (p *postgres) reset(context.Context) error {
	return removeAll(p.dataDir(), p.sockDir(), filepath.Dir(p.logFile()), p.pidFile())
}

func (p *postgres) hasState() bool {
	return p.hostProc.hasState() || isDir(p.dataDir())
}

// Psql runs psql's -c SQL on the course's PostgreSQL as user postgres and
// returns its unaligned, tuples-only output. The binaries are Debian's
// PostgreSQL 15, which the postgres service installs.
func (s *Stand) Psql(ctx context.Context, sql string) (string, error) {
	p := newPostgres(s)
	cmd := exec.CommandContext(ctx, p.bin("psql"), "-h", "127.0.0.1", "-p", strconv.Itoa(PostgresPort), "-U", "postgres",
		"-d", "postgres", "-X", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql -c %q: %v: %s", sql, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}

// pgAccepts is nil when PostgreSQL on addr accepts a connection for user
// postgres: it sends a StartupMessage and reads the first answer, as
// pg_isready does. AuthenticationOk (or a request for a password) means it
// accepts; an ErrorResponse says why not ("the database system is starting up").
func pgAccepts(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("nothing answers on %s yet", addr)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write(pgStartup("postgres", "postgres")); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	kind, body, err := pgMessage(r)
	if err != nil {
		return fmt.Errorf("no answer to a startup message: %w", err)
	}
	switch kind {
	case 'R':
		conn.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
		return nil
	case 'E':
		return errors.New(pgError(body))
	}
	return fmt.Errorf("unexpected answer %q to a startup message", kind)
}

// pgStartup is a protocol 3.0 StartupMessage for user and database.
func pgStartup(user, database string) []byte {
	var body bytes.Buffer
	binary.Write(&body, binary.BigEndian, int32(3<<16))
	for _, kv := range []string{"user", user, "database", database} {
		body.WriteString(kv)
		body.WriteByte(0)
	}
	body.WriteByte(0)
	msg := binary.BigEndian.AppendUint32(nil, uint32(body.Len()+4))
	return append(msg, body.Bytes()...)
}

// pgMessage reads one backend message: its type byte and body.
func pgMessage(r io.Reader) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n < 4 || n > 1<<20 {
		return 0, nil, fmt.Errorf("bad message length %d", n)
	}
	body := make([]byte, n-4)
	_, err := io.ReadFull(r, body)
	return head[0], body, err
}

// pgError is the message field (M) of an ErrorResponse body.
func pgError(body []byte) string {
	for _, field := range bytes.Split(body, []byte{0}) {
		if len(field) > 1 && field[0] == 'M' {
			return string(field[1:])
		}
	}
	return "PostgreSQL refused the connection"
}

// traversable checks that the user uid (groups gid and groups) can enter
// every folder from / down to dir: PostgreSQL, run as its own user, opens
// its data folder by that path.
func traversable(dir string, uid int, gid uint32, groups []uint32) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil && !canEnter(fi, uid, gid, groups) {
			return fmt.Errorf("that user cannot enter %s (mode %04o, owner uid %d): `chmod o+x %s`, or clone the course where every folder above it is open to others", d, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func canEnter(fi os.FileInfo, uid int, gid uint32, groups []uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) == uid:
		return perm&0o100 != 0
	case st.Gid == gid || slices.Contains(groups, st.Gid):
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}

func chownTo(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("handing %s to the user %s: %w", path, pgUser, err)
	}
	return nil
}

// runWithin runs cmd, killing it after limit, and returns its output.
func runWithin(ctx context.Context, cmd *exec.Cmd, limit time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return out.Bytes(), fmt.Errorf("still running after %s", limit)
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		return out.Bytes(), ctx.Err()
	}
}

// lastLine is the last line of out that is not blank.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func joinArgs(args []string) string { return strings.Join(args, " ") }
