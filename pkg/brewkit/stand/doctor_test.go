package stand

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func findCheck(t *testing.T, d Diagnosis, name string) Check {
	t.Helper()
	for _, c := range d.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, d.Checks)
	return Check{}
}

// A port held by a listener of ours, which this checkout did not start as a
// stand: the doctor names the process.
func TestDoctorNamesAForeignListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	s := &Stand{Root: t.TempDir()}
	who := s.portHolder(port)
	self, _ := os.ReadFile("/proc/self/comm")
	require.Contains(t, who, "pid "+itoa(os.Getpid()), who)
	require.Contains(t, who, strings.TrimSpace(string(self)))

	c := portCheck(1, port, "", who)
	require.Equal(t, "warn", c.Status)
	require.Contains(t, c.Detail, "did not start")
	require.NotEmpty(t, c.Fix)
	require.Equal(t, "ok", portCheck(1, port, Native, who).Status, "held by our own stand")
	l.Close()
	require.Empty(t, s.portHolder(port), "free once closed")
}

// No Java on PATH: the native stand is not offered, the check says how to
// get it, and the embedded stand still can run, so the doctor passes.
func TestDoctorWithoutJava(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(goBin, filepath.Join(bin, "go")))
	t.Setenv("PATH", bin)
	t.Setenv("JAVA_HOME", "")
	s := &Stand{Root: t.TempDir()}
	d := s.Doctor(context.Background(), brewkit.Config{Brokers: []string{"127.0.0.1:1"}})
	java := findCheck(t, d, "java")
	require.Equal(t, "warn", java.Status)
	require.Contains(t, java.Detail, "java is not installed")
	require.Contains(t, java.Fix, "JDK 17")
	require.False(t, slices.Contains(d.Stands, Native), "no native stand without Java: %v", d.Stands)
	require.False(t, slices.Contains(d.Stands, Docker), "no docker on this PATH either: %v", d.Stands)
	require.Equal(t, []Flavor{Embedded}, d.Stands)
	require.True(t, d.OK())
	require.Equal(t, "ok", findCheck(t, d, "cluster").Status, "no cluster answering is not a problem")
}

// Without Go, nothing can run: the doctor fails.
func TestDoctorWithoutGoFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("JAVA_HOME", "")
	s := &Stand{Root: t.TempDir()}
	d := s.Doctor(context.Background(), brewkit.Config{Brokers: []string{"127.0.0.1:1"}})
	require.Equal(t, "FAIL", findCheck(t, d, "go").Status)
	require.False(t, d.OK())
}

// A cluster with another cluster id (and other node ids) is reported, with
// what differs.
func TestDoctorSeesAnotherCluster(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ClusterID("another-cluster"))
	require.NoError(t, err)
	defer c.Close()
	got := contractCheck(context.Background(), brewkit.Config{Brokers: c.ListenAddrs()})
	require.Equal(t, "warn", got.Status)
	require.Contains(t, got.Detail, "cluster id another-cluster, the course's is "+brewkit.ClusterID)
	require.Contains(t, got.Detail, "brokers [0 1 2] registered")
	require.NotEmpty(t, got.Fix)
}

func TestGoVersionCompare(t *testing.T) {
	require.True(t, atLeast("go1.26.8", 1, 26))
	require.True(t, atLeast("go1.27", 1, 26))
	require.False(t, atLeast("go1.25.3", 1, 26))
	require.False(t, atLeast("devel", 1, 26))
}

func itoa(n int) string { return strconv.Itoa(n) }
