package stand

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// These need no real process: the services' configuration as generated,
// their placement on each stand, the start and wait logic on a stand-in
// process, and what status prints. stand/services_test.go runs the real
// services (BREW_SERVICES_TEST=1).

func properties(t *testing.T, text string) map[string]string {
	t.Helper()
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "bad line %q", line)
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return props
}

func TestPostgresConfigIsLogicalAndLoopbackOnly(t *testing.T) {
	conf := properties(t, postgresConf(15432, "/repo/.stand/services/postgres/run"))
	require.Equal(t, "'127.0.0.1'", conf["listen_addresses"])
	require.Equal(t, "15432", conf["port"])
	require.Equal(t, "logical", conf["wal_level"])
	require.Equal(t, "'/repo/.stand/services/postgres/run'", conf["unix_socket_directories"])
	require.Equal(t, "10", conf["max_replication_slots"])
	require.Equal(t, "10", conf["max_wal_senders"])
	// A quote in the checkout's path does not end the string early.
	require.Contains(t, postgresConf(1, "/it's/run"), `'/it''s/run'`)
}

func TestPostgresHBATrustsLoopbackAndReplication(t *testing.T) {
	var hosts []string
	for _, line := range strings.Split(postgresHBA, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		require.Equal(t, "trust", f[len(f)-1], line)
		if f[0] == "host" {
			require.Equal(t, "127.0.0.1/32", f[3], "only this machine: %s", line)
			hosts = append(hosts, f[1])
		}
	}
	require.ElementsMatch(t, []string{"all", "replication"}, hosts)
}

func TestConnectWorkerConfig(t *testing.T) {
	w := properties(t, connectWorkerConfig("127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094"))
	for k, want := range map[string]string{
		"bootstrap.servers":                 "127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094",
		"group.id":                          "brew-connect",
		"config.storage.topic":              "brew-connect-configs",
		"offset.storage.topic":              "brew-connect-offsets",
		"status.storage.topic":              "brew-connect-status",
		"config.storage.replication.factor": "3",
		"offset.storage.replication.factor": "3",
		"status.storage.replication.factor": "3",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"listeners":                         "http://127.0.0.1:18083",
		"rest.advertised.host.name":         "127.0.0.1",
		"rest.advertised.port":              "18083",
	} {
		require.Equal(t, want, w[k], k)
	}
}

func TestConnectFetchesTheCoursesRelease(t *testing.T) {
	c := newConnect(&Stand{Root: "/repo"})
	require.Equal(t, "/repo/.stand/services/connect/lib-"+ConnectRuntimeVersion+"-"+DebeziumVersion, c.lib())
	args := strings.Join(c.mavenArgs(), " ")
	for _, want := range []string{
		"-s /repo/stand/services/connect/settings.xml", "-f /repo/stand/services/connect/pom.xml",
		"-Dconnect.version=" + ConnectRuntimeVersion, "-Ddebezium.version=" + DebeziumVersion,
		"-Dlib.dir=" + c.lib(), "dependency:copy-dependencies",
	} {
		require.Contains(t, args, want)
	}
}

func TestPrometheusFlags(t *testing.T) {
	t.Setenv(EnvInstance, "") // the contract ports: instance 0, whatever the tier set
	p := newPrometheus(&Stand{Root: "/repo"})
	require.Equal(t, []string{
		"--config.file=/repo/stand/services/prometheus.yml",
		"--storage.tsdb.path=/repo/.stand/services/prometheus/data",
		"--web.listen-address=127.0.0.1:19090",
		"--web.enable-lifecycle",
	}, p.args())
	require.Equal(t, 17072, MetricsPort(2))
}

func TestServicePortsKeepClearOfTheCluster(t *testing.T) {
	taken := map[int]bool{19095: true} // the embedded stand's control port
	for _, n := range Nodes {
		taken[ClientPort(n)], taken[29091+n], taken[39091+n] = true, true, true
	}
	want := map[string]int{"postgres": 15432, "prometheus": 19090, "connect": 18083}
	for _, svc := range Services() {
		require.Equal(t, want[svc.Name], svc.Port, svc.Name)
		require.False(t, taken[svc.Port], "%s's port %d is the cluster's", svc.Name, svc.Port)
		taken[svc.Port] = true
		require.Equal(t, "127.0.0.1:"+itoa(svc.Port), svc.Addr())
	}
}

func TestLookupServices(t *testing.T) {
	svcs, err := lookupServices([]string{"connect", "postgres", "connect"})
	require.NoError(t, err)
	require.Equal(t, []string{"postgres", "connect"}, names(svcs), "the course's order, each once")
	all, err := lookupServices(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"postgres", "prometheus", "connect"}, names(all))
	_, err = lookupServices([]string{"mysql"})
	require.EqualError(t, err, `unknown service "mysql": the services are postgres, prometheus, connect`)
	require.ErrorContains(t, (&Stand{Root: t.TempDir()}).StartServices(context.Background()), "name the services to start")
}

func names(svcs []Service) []string {
	var out []string
	for _, svc := range svcs {
		out = append(out, svc.Name)
	}
	return out
}

// connect is a Kafka client: it refuses the simulation and a missing stand,
// each with one line saying what to run.
func TestPlacementOnEachStand(t *testing.T) {
	defer func(f func(context.Context, string) string) { imageUnavailable = f }(imageUnavailable)
	s := &Stand{Root: t.TempDir()}
	ctx := context.Background()

	_, _, _, err := s.placement(ctx, connectService, Embedded)
	require.EqualError(t, err, "connect needs real Kafka and the embedded stand is the kfake simulation: run `make down && make up STAND=native`")
	_, _, _, err = s.placement(ctx, connectService, "")
	require.ErrorContains(t, err, "no stand is up: run `make up STAND=native` first")

	for _, f := range []Flavor{Native, Embedded, ""} {
		p, how, note, err := s.placement(ctx, postgresService, f)
		require.NoError(t, err, f)
		require.IsType(t, &postgres{}, p)
		require.Equal(t, runsOnHost, how)
		require.Equal(t, "a host process", note)
	}

	imageUnavailable = func(_ context.Context, image string) string { return image + " cannot be pulled here" }
	p, how, note, err := s.placement(ctx, postgresService, Docker)
	require.NoError(t, err)
	require.IsType(t, &postgres{}, p)
	require.Equal(t, runsOnHost, how)
	require.Equal(t, "a host process beside the docker stand (postgres:15 cannot be pulled here)", note)

	defer func(f func() bool) { courseAnswers = f }(courseAnswers)
	courseAnswers = func() bool { return false }
	_, _, _, err = s.placement(ctx, connectService, Native)
	require.EqualError(t, err, "connect needs the course cluster, and no node of the native stand answers: see `make status`, `make restore`")

	courseAnswers = func() bool { return true }
	imageUnavailable = func(context.Context, string) string { return "" }
	p, how, note, err = s.placement(ctx, connectService, Docker)
	require.NoError(t, err)
	require.IsType(t, &container{}, p)
	require.Equal(t, runsInContainer, how)
	require.Contains(t, note, "quay.io/debezium/connect:"+DebeziumVersion)
	require.Equal(t, []string{"docker", "compose", "-p", "brew", "-f", s.Root + "/stand/docker-compose.yml", "--profile", "connect", "up", "-d", "connect"},
		p.(*container).compose(ctx, "up", "-d", "connect").Args)
}

// fakeProc stands in for a service's process.
type fakeProc struct {
	up, installedOK, dies bool
	starts, installs      int
	log                   string
}

func (f *fakeProc) installed() (bool, string) { return f.installedOK, "fake" }
func (f *fakeProc) install(context.Context) error {
	f.installs++
	f.installedOK = true
	return nil
}
func (f *fakeProc) start(context.Context) error { f.starts++; f.up = !f.dies; return nil }
func (f *fakeProc) running() (bool, string)     { return f.up, "pid 42" }
func (f *fakeProc) stop(context.Context) error  { f.up = false; return nil }
func (f *fakeProc) logFile() string             { return f.log }
func (f *fakeProc) logs(w io.Writer) error      { _, err := io.WriteString(w, "fake log\n"); return err }
func (f *fakeProc) reset(context.Context) error { return nil }
func (f *fakeProc) hasState() bool              { return f.starts > 0 }

// fakeService swaps the course's services for one on a free port whose
// process is p and which is ready when ready says.
func fakeService(t *testing.T, s *Stand, p *fakeProc, ready func() error) Service {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p.log = filepath.Join(s.Root, ".stand", "services", "fake", "logs", "fake.log")
	svc := Service{Name: "fake", Port: port, ReadyIn: 500 * time.Millisecond,
		ready: func(context.Context) error { return ready() },
		host:  func(*Stand) process { return p }}
	saved := services
	services = []Service{svc}
	t.Cleanup(func() { services = saved })
	return svc
}

func TestStartServiceInstallsOnceAndIsIdempotent(t *testing.T) {
	var out strings.Builder
	s := &Stand{Root: t.TempDir(), Out: &out}
	p := &fakeProc{}
	fakeService(t, s, p, func() error { return nil })
	require.NoError(t, s.StartServices(context.Background(), "fake"))
	require.Equal(t, 1, p.installs)
	require.Equal(t, 1, p.starts)
	require.Contains(t, out.String(), "stand: fake is ready on 127.0.0.1:")
	require.Contains(t, out.String(), "(a host process, pid 42)")

	require.NoError(t, s.StartServices(context.Background(), "fake"))
	require.Equal(t, 1, p.starts, "already running: nothing to do")
	require.Contains(t, out.String(), "stand: fake is already running")

	require.NoError(t, s.StopServices(context.Background()))
	require.False(t, p.up)
	require.Contains(t, out.String(), "stand: fake stopped")
}

func TestStartServiceWaitsAreBoundedAndNameTheLog(t *testing.T) {
	s := &Stand{Root: t.TempDir(), Out: io.Discard}
	p := &fakeProc{installedOK: true}
	fakeService(t, s, p, func() error { return errors.New("nothing answers yet") })
	start := time.Now()
	err := s.StartServices(context.Background(), "fake")
	require.Less(t, time.Since(start), 5*time.Second)
	require.ErrorContains(t, err, "fake did not become ready on 127.0.0.1:")
	require.ErrorContains(t, err, "within 500ms (nothing answers yet); see .stand/services/fake/logs/fake.log")
	require.NotContains(t, err.Error(), "\n", "one line")

	p.up, p.dies = false, true
	err = s.StartServices(context.Background(), "fake")
	require.EqualError(t, err, "fake exited while starting; see .stand/services/fake/logs/fake.log")
}

func TestStartServiceRefusesATakenPort(t *testing.T) {
	s := &Stand{Root: t.TempDir(), Out: io.Discard}
	p := &fakeProc{installedOK: true}
	svc := fakeService(t, s, p, func() error { return nil })
	ln, err := net.Listen("tcp", svc.Addr())
	require.NoError(t, err)
	defer ln.Close()
	err = s.StartServices(context.Background(), "fake")
	require.ErrorContains(t, err, "fake cannot start: "+svc.Addr()+" is held by a process this checkout did not start (pid ")
	require.Zero(t, p.starts)
}

func TestServiceStatusesAndPrint(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	require.Empty(t, s.ServiceStatuses(context.Background()), "no state: nothing to list")

	var b strings.Builder
	PrintServices(&b, []ServiceStatus{
		{Name: "postgres", Addr: "127.0.0.1:15432", Running: true, Process: "pid 7", Runs: onHost, Ready: true},
		{Name: "prometheus", Addr: "127.0.0.1:19090"},
		{Name: "connect", Addr: "127.0.0.1:18083", Running: true, Process: "pid 9", Ready: false,
			Why: "nothing answers on 127.0.0.1:18083 yet", Runs: "a host process beside the docker stand (quay.io/debezium/connect:3.6.1.Final cannot be pulled here)"},
	})
	got := b.String()
	require.Equal(t, `SERVICE     ADDRESS          PROCESS                                            READY
postgres    127.0.0.1:15432  running, pid 7                                     ready
prometheus  127.0.0.1:19090  stopped (its data is kept; `+"`make reset`"+` wipes it)  -
connect     127.0.0.1:18083  running, pid 9                                     NOT READY: nothing answers on 127.0.0.1:18083 yet
connect: a host process beside the docker stand (quay.io/debezium/connect:3.6.1.Final cannot be pulled here)
`, got)

	st := Status{Flavor: Native, Leader: 1, Services: []ServiceStatus{{Name: "postgres", Addr: "127.0.0.1:15432"}}}
	b.Reset()
	st.Print(&b)
	require.Contains(t, b.String(), "quorum leader (active controller): node 1\n\nSERVICE")
}

// A service that ran once is listed, stopped, until reset wipes it.
func TestServiceWithStateIsListedUntilReset(t *testing.T) {
	s := &Stand{Root: t.TempDir(), Out: io.Discard}
	pg := newPostgres(s)
	require.NoError(t, os.MkdirAll(filepath.Dir(pg.logFile()), 0o755))
	require.NoError(t, os.WriteFile(pg.logFile(), []byte("LOG: ready\n"), 0o644))
	st := s.ServiceStatuses(context.Background())
	require.Len(t, st, 1)
	require.Equal(t, ServiceStatus{Name: "postgres", Addr: "127.0.0.1:15432"}, st[0])
	require.NoError(t, s.resetServices(context.Background()))
	require.Empty(t, s.ServiceStatuses(context.Background()))
}

// pgAccepts speaks enough of PostgreSQL's protocol to tell a server that
// accepts connections from one that is starting up.
func TestPgAccepts(t *testing.T) {
	serve := func(t *testing.T, answer []byte) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			var n uint32
			if binary.Read(conn, binary.BigEndian, &n) != nil {
				return
			}
			msg := make([]byte, n-4)
			io.ReadFull(conn, msg)
			if !strings.Contains(string(msg), "user\x00postgres\x00database\x00postgres\x00") {
				return
			}
			conn.Write(answer)
			io.Copy(io.Discard, conn)
		}()
		return ln.Addr().String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	authOK := []byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}
	require.NoError(t, pgAccepts(ctx, serve(t, authOK)))

	body := []byte("SFATAL\x00C57P03\x00Mthe database system is starting up\x00\x00")
	starting := append([]byte{'E'}, binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))...)
	require.EqualError(t, pgAccepts(ctx, serve(t, append(starting, body...))), "the database system is starting up")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	require.EqualError(t, pgAccepts(ctx, addr), "nothing answers on "+addr+" yet")
}

// PostgreSQL runs as its own user when the stand runs as root: every folder
// above its data must let that user in.
func TestTraversable(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		require.NoError(t, os.Chmod(d, 0o755)) // t.TempDir is closed to others itself
	}
	closed := filepath.Join(root, "closed")
	dir := filepath.Join(closed, "repo", ".stand")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(closed, 0o700))
	const other = 54321
	err := traversable(dir, other, other, nil)
	require.ErrorContains(t, err, "cannot enter "+closed+" (mode 0700")
	require.ErrorContains(t, err, "`chmod o+x "+closed+"`")
	require.NoError(t, traversable(dir, os.Getuid(), uint32(os.Getgid()), nil), "its owner may")
	require.NoError(t, os.Chmod(closed, 0o711))
	require.NoError(t, traversable(dir, other, other, nil))
}

// make doctor: a service's port held by someone else is named, with the fix.
func TestDoctorServicePort(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	p := &fakeProc{}
	svc := fakeService(t, s, p, func() error { return nil })
	detail, fix := s.servicePort(svc)
	require.Equal(t, "port "+itoa(svc.Port)+" free", detail)
	require.Empty(t, fix)
	ln, err := net.Listen("tcp", svc.Addr())
	require.NoError(t, err)
	defer ln.Close()
	detail, fix = s.servicePort(svc)
	require.Contains(t, detail, "held by a process this checkout did not start: pid "+itoa(os.Getpid()))
	require.Equal(t, "stop it before `make services-up S=fake`", fix)
	p.up = true
	detail, fix = s.servicePort(svc)
	require.Equal(t, "port "+itoa(svc.Port)+": fake is running (pid 42)", detail)
	require.Empty(t, fix)
}

// ensure with connect: the course stand, real Kafka, or one line on what to run.
func TestEnsureConnectNeedsTheCoursesRealStand(t *testing.T) {
	ctx := context.Background()
	s := &Stand{Root: t.TempDir(), Out: io.Discard}
	err := s.Ensure(ctx, brewkit.Config{Brokers: []string{"127.0.0.1:1"}}, "connect")
	require.EqualError(t, err, "connect runs against the course stand only, not KAFKA_BOOTSTRAP=127.0.0.1:1: unset it")
	require.ErrorContains(t, s.Ensure(ctx, brewkit.Default(), "mysql"), `unknown service "mysql"`)
	require.NoError(t, s.setCurrent(Embedded))
	err = s.Ensure(ctx, brewkit.Default(), "postgres", "connect")
	require.EqualError(t, err, "connect needs real Kafka and the embedded stand is the kfake simulation: run `make down && make up STAND=native`")
}
