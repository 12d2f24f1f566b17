package stand

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// A Check is one line of `make doctor`: what was checked, how it went, and
// what to do about it when it did not go well.
type Check struct {
	Name   string
	Status string // "ok", "warn" (something is missing or odd) or "FAIL" (blocks a stand)
	Detail string
	Fix    string
}

// Diagnosis is what `make doctor` found.
type Diagnosis struct {
	Checks []Check
	Stands []Flavor // the stands this machine can run
}

// Doctor checks what the course needs on this machine and, when a cluster
// answers on cfg, whether it keeps the course contract.
func (s *Stand) Doctor(ctx context.Context, cfg brewkit.Config) Diagnosis {
	var d Diagnosis
	add := func(c Check) { d.Checks = append(d.Checks, c) }

	goOK := true
	if v, err := goVersion(ctx); err != nil {
		goOK = false
		add(Check{"go", "FAIL", err.Error(), "install Go 1.26 or newer: https://go.dev/dl/"})
	} else if !atLeast(v, 1, 26) {
		goOK = false
		add(Check{"go", "FAIL", v + " is older than the course's go1.26", "install Go 1.26 or newer: https://go.dev/dl/"})
	} else {
		add(Check{"go", "ok", v, ""})
	}
	if goOK {
		d.Stands = append(d.Stands, Embedded)
	}

	dockerErr := dockerAnswers(ctx)
	if dockerErr == nil {
		detail := "engine and Compose v2 answer"
		if mem := dockerMemory(ctx); mem > 0 {
			detail += fmt.Sprintf("; %.1f GiB for containers", float64(mem)/(1<<30))
			if mem < 4<<30 {
				add(Check{"docker", "warn", detail, "give Docker 4 GiB or more (Docker Desktop: Settings > Resources), three Kafka nodes need about 2"})
			} else {
				add(Check{"docker", "ok", detail, ""})
			}
		} else {
			add(Check{"docker", "ok", detail, ""})
		}
		d.Stands = append(d.Stands, Docker)
		add(s.imageCheck(ctx))
	} else {
		add(Check{"docker", "warn", dockerErr.Error(), "install Docker with the Compose v2 plugin for the docker stand, or use STAND=native / STAND=embedded"})
	}

	javaErr := javaAndMaven(ctx)
	if javaErr == nil {
		add(Check{"java", "ok", "Java 17+ and Maven found", ""})
	} else {
		add(Check{"java", "warn", javaErr.Error(), "install a JDK 17+ and Maven for the native stand (Debian: apt install openjdk-17-jdk-headless maven)"})
	}
	if avail := memAvailable(); avail > 0 {
		const need = 2 << 30
		c := Check{"memory", "ok", fmt.Sprintf("%.1f GiB available", float64(avail)/(1<<30)), ""}
		if avail < need {
			c.Status, c.Fix = "warn", "three Kafka JVMs or containers need about 2 GiB: close something, or use STAND=embedded"
		}
		add(c)
		if javaErr == nil && avail >= need {
			d.Stands = append(d.Stands, Native)
		}
	} else if javaErr == nil {
		d.Stands = append(d.Stands, Native)
	}

	if free, err := diskFree(s.Root); err == nil {
		c := Check{"disk", "ok", fmt.Sprintf("%.1f GiB free for the jars (54 MB) and the data", float64(free)/(1<<30)), ""}
		if free < 1<<30 {
			c.Status, c.Fix = "warn", "free 1 GiB or more on this disk, or `make reset` to drop old stand data"
		}
		add(c)
	}

	cur := s.Current()
	for _, n := range Nodes {
		add(portCheck(n, ClientPort(n), cur, s.portHolder(ClientPort(n))))
	}
	for _, n := range Nodes { // where the node serves its metrics for Prometheus
		add(portCheck(n, MetricsPort(n), cur, s.portHolder(MetricsPort(n))))
	}

	for _, svc := range services {
		add(s.serviceCheck(ctx, svc))
	}
	for _, o := range s.Instances() {
		if o.instance != s.instance {
			add(Check{"instance", "ok", fmt.Sprintf("instance %d: the %s stand is up on %s (a test tier's)", o.instance, o.Current(), Bootstrap(o.instance)), "`make down` stops it with the rest"})
		}
	}

	add(contractCheck(ctx, cfg))
	add(s.securedCheck(ctx))

	if len(d.Stands) == 0 {
		add(Check{"stands", "FAIL", "no stand can run on this machine", "install Go 1.26+ (the embedded stand needs nothing else)"})
	} else {
		var names []string
		for _, f := range d.Stands {
			names = append(names, string(f))
		}
		add(Check{"stands", "ok", "this machine can run: " + strings.Join(names, ", "), ""})
	}
	return d
}

// imageCheck says which image the docker stand runs or would run, and
// whether it is the course's stand-in (built by stand/standin/build where no
// image can be pulled) rather than the official one.
func (s *Stand) imageCheck(ctx context.Context) Check {
	d := &docker{s: s}
	img, standIn := d.runningImage()
	if img == "" {
		img = d.image()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", `{{index .Config.Labels "org.brew.standin"}}`, img).Output()
		if err != nil {
			if img == OfficialImage {
				return Check{"image", "ok", img + " (pulled by the first `make up STAND=docker`)", ""}
			}
			return Check{"image", "warn", img + " (BREW_KAFKA_IMAGE) is not on this machine", "build it with `make standin-image`, or unset BREW_KAFKA_IMAGE for " + OfficialImage}
		}
		standIn = strings.TrimSpace(string(out))
	}
	if standIn != "" {
		return Check{"image", "ok", img + ": a STAND-IN built here by stand/standin/build (build " + standIn + "), not the official " + OfficialImage, ""}
	}
	return Check{"image", "ok", img, ""}
}

// portCheck judges a port of node n (its client or its metrics port): free,
// held by the stand of this checkout that is up (cur), or held by someone
// else (who).
func portCheck(n, port int, cur Flavor, who string) Check {
	name := fmt.Sprintf("port %d", port)
	switch {
	case who == "":
		return Check{name, "ok", "free", ""}
	case cur != "":
		return Check{name, "ok", fmt.Sprintf("node %d of the %s stand (%s)", n, cur, who), ""}
	}
	return Check{name, "warn", "held by a process this checkout did not start: " + who,
		"stop it before `make up`, or point KAFKA_BOOTSTRAP at it if it is a Kafka of your own"}
}

// OK reports whether some stand can run here: `make doctor` exits 1 otherwise.
func (d Diagnosis) OK() bool { return len(d.Stands) > 0 }

// Print writes one line per check, its fix on the next.
func (d Diagnosis) Print(w io.Writer) {
	for _, c := range d.Checks {
		fmt.Fprintf(w, "%-4s  %-10s  %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "      %-10s  fix: %s\n", "", c.Fix)
		}
	}
}

var goVersionRe = regexp.MustCompile(`^go(\d+)\.(\d+)`)

func goVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", errors.New("go is not on PATH")
	}
	return strings.TrimSpace(string(out)), nil
}

func atLeast(v string, major, minor int) bool {
	m := goVersionRe.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a > major || a == major && b >= minor
}

func dockerMemory(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.MemTotal}}").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return n
}

// memAvailable reads MemAvailable from /proc/meminfo (0 where there is none).
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func diskFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// portHolder says who listens on 127.0.0.1:port: "" when nobody does, else
// the process (pid and command) where Linux lets us find it.
func (s *Stand) portHolder(port int) string {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 300*time.Millisecond)
	if err != nil {
		return ""
	}
	conn.Close()
	if pid, cmd := listenerProcess(port); pid > 0 {
		return fmt.Sprintf("pid %d, %s", pid, cmd)
	}
	return "a process not visible from here (another user's, or inside a container)"
}

// listenerProcess finds the process listening on port through /proc (Linux).
func listenerProcess(port int) (int, string) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fl[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
				inodes[fl[9]] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0, ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			pidDir := filepath.Dir(filepath.Dir(fd))
			pid, _ := strconv.Atoi(filepath.Base(pidDir))
			cmd, _ := os.ReadFile(filepath.Join(pidDir, "comm"))
			return pid, strings.TrimSpace(string(cmd))
		}
	}
	return 0, ""
}

// contractCheck compares the cluster on cfg, if one answers, with the course
// contract: cluster id, node ids 1-3, replication defaults, share groups.
func contractCheck(ctx context.Context, cfg brewkit.Config) Check {
	const name = "cluster"
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return Check{name, "warn", err.Error(), "check KAFKA_BOOTSTRAP and the KAFKA_SASL_* settings"}
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return Check{name, "ok", "no cluster answers on " + strings.Join(cfg.Brokers, ","), "`make up` starts one"}
	}
	var problems []string
	if md.Cluster != brewkit.ClusterID {
		problems = append(problems, fmt.Sprintf("cluster id %s, the course's is %s", md.Cluster, brewkit.ClusterID))
	}
	ids := md.Brokers.NodeIDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []int32{1, 2, 3}) {
		problems = append(problems, fmt.Sprintf("brokers %v registered, the course has 1, 2, 3 (a node stopped? `make status`)", ids))
	}
	if len(ids) > 0 {
		if rc, err := adm.DescribeBrokerConfigs(ctx, ids[0]); err == nil && len(rc) > 0 {
			for _, want := range []struct{ key, value string }{
				{"default.replication.factor", "3"}, {"min.insync.replicas", "2"}, {"auto.create.topics.enable", "false"},
			} {
				for _, c := range rc[0].Configs {
					if c.Key == want.key && c.MaybeValue() != want.value {
						problems = append(problems, fmt.Sprintf("%s=%s, the course's is %s", want.key, c.MaybeValue(), want.value))
					}
				}
			}
		}
	}
	if !shareGroups(ctx, cl) {
		problems = append(problems, "share groups are not available (Kafka "+KafkaMinor+" with share.version 1 or newer has them)")
	}
	release := ""
	if r, err := brewkit.ClusterRelease(ctx, cl); err == nil && r.Software != "" {
		release = ", " + r.String()
		if d := r.Differs(KafkaMinor); d != "" {
			problems = append(problems, d)
		}
	}
	addr := strings.Join(cfg.Brokers, ",")
	if len(problems) > 0 {
		return Check{name, "warn", "the cluster on " + addr + " differs from the course contract: " + strings.Join(problems, "; "),
			"lectures may not print what their READMEs show; for the course cluster: `make down` (or unset KAFKA_BOOTSTRAP) and `make up`"}
	}
	return Check{name, "ok", "the cluster on " + addr + " keeps the course contract (id, nodes 1-3, RF 3, min ISR 2, share groups" + release + ")", ""}
}

// shareGroups reports whether the cluster answers ShareGroupHeartbeat and,
// where it reports features, has share.version enabled.
func shareGroups(ctx context.Context, cl interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}) bool {
	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return false
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	hasAPI := false
	for _, k := range av.ApiKeys {
		if k.ApiKey == kmsg.ShareGroupHeartbeat.Int16() {
			hasAPI = true
		}
	}
	// Kafka finalizes share.version at format time (1 on 4.2, 2 on 4.4); the simulation
	// reports no features but answers the share APIs.
	for _, f := range av.FinalizedFeatures {
		if f.Name == "share.version" {
			return hasAPI && f.MaxVersionLevel >= 1
		}
	}
	return hasAPI
}
