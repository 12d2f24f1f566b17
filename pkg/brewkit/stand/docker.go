package stand

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// docker runs three OfficialImage containers (or BREW_KAFKA_IMAGE) with docker compose.
type docker struct {
	s     *Stand
	runFn func(ctx context.Context, args ...string) error // tests record the calls; nil runs docker compose
}

// composeProject names the compose project on every call, so that a
// COMPOSE_PROJECT_NAME in the user's environment (which beats the file's own
// name:) cannot point the stand at other containers and volumes.
const composeProject = "brew"

// compose is docker compose on the stand's project. Another instance of the
// stand is project brew-i<N>, from the contract file rewritten for its ports,
// containers, network and key stores (instanceCompose); its relative paths
// still resolve from stand/.
func (d *docker) compose(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"compose", "-p", composeProject, "-f", filepath.Join(d.s.Root, "stand", "docker-compose.yml")}, args...)
	if d.s.instance != 0 {
		all = append([]string{"compose", "-p", composeProject + "-" + InstanceName(d.s.instance),
			"--project-directory", filepath.Join(d.s.Root, "stand"), "-f", d.s.state("docker-compose.yml")}, args...)
	}
	cmd := exec.CommandContext(ctx, "docker", all...)
	cmd.Dir = d.s.Root
	cmd.Env = append(os.Environ(), EnvImage+"="+d.image())
	return cmd
}

// EnvImage names the image of the docker stand's nodes; unset, it is the
// official OfficialImage. Where no image can be pulled, CI builds a
// stand-in with stand/standin/build and names it here.
const EnvImage = "BREW_KAFKA_IMAGE"

// image is the image the stand's containers run: the one `up` was given, so
// that a later `start-node` or restore without BREW_KAFKA_IMAGE in the
// environment does not make compose recreate the containers from another.
func (d *docker) image() string {
	if img := os.Getenv(EnvImage); img != "" {
		return img
	}
	if d.s.Current() == Docker {
		if b, err := os.ReadFile(d.s.state("docker-image")); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return string(bytes.TrimSpace(b))
		}
		if img, _ := d.runningImage(); img != "" {
			return img
		}
	}
	return OfficialImage
}

// runningImage reports the image the first node's container was
// made from, and the stand-in build label it carries ("" for any other image,
// such as the official one).
func (d *docker) runningImage() (image, standIn string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range Nodes {
		out, err := exec.CommandContext(ctx, "docker", "inspect", "-f",
			`{{.Config.Image}}|{{index .Config.Labels "org.brew.standin"}}`, nodeContainer(n)).Output()
		if err != nil {
			continue
		}
		image, standIn, _ = strings.Cut(strings.TrimSpace(string(out)), "|")
		return image, standIn
	}
	return "", ""
}

func (d *docker) run(ctx context.Context, args ...string) error {
	if d.runFn != nil {
		return d.runFn(ctx, args...)
	}
	cmd := d.compose(ctx, args...)
	// `up` shows compose's progress (a first pull takes minutes); the node
	// verbs print one line of their own, and compose's only when it fails.
	var out bytes.Buffer
	if args[0] == "up" {
		cmd.Stdout, cmd.Stderr = d.s.Out, d.s.Out
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker compose %s: %w\n%s", strings.Join(args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// service is node n's compose service, and its host name in the stand's network.
func service(n int) string { return fmt.Sprintf("kafka-%d", n) }

// nodeContainer is node n's container: kafka-N on instance 0, brew-iN-kafka-N on
// another instance (instance.go).
func nodeContainer(n int) string {
	if i := Instance(); i != 0 {
		return composeProject + "-" + InstanceName(i) + "-" + service(n)
	}
	return service(n)
}

// instanceCompose writes the compose file of another instance: the contract
// file with the instance's ports, its own container names and network (the
// contract's fixed subnet 10.210.119.0/24 moved to 10.210.119+N), and its own
// key stores. The services stay instance 0's (an instance runs none).
func (d *docker) instanceCompose() error {
	if d.s.instance == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(d.s.Root, "stand", "docker-compose.yml"))
	if err != nil {
		return err
	}
	i := d.s.instance
	conf := instancePorts(i, string(b))
	conf = strings.NewReplacer(
		"container_name: kafka-", "container_name: "+composeProject+"-"+InstanceName(i)+"-kafka-",
		"10.210.119.", fmt.Sprintf("10.210.%d.", 119+i),
		"../.stand/tls:", "../.stand/"+InstanceName(i)+"/tls:",
	).Replace(conf)
	if err := os.MkdirAll(d.s.state(), 0o755); err != nil {
		return err
	}
	return os.WriteFile(d.s.state("docker-compose.yml"), []byte(conf), 0o644)
}

func (d *docker) ports() []int {
	var ps []int
	for _, n := range Nodes {
		ps = append(ps, ClientPort(n), SecurePort(n), MTLSPort(n), MetricsPort(n))
	}
	return ps
}

func (d *docker) start(ctx context.Context) error {
	if err := dockerAnswers(ctx); err != nil {
		return fmt.Errorf("the docker stand needs a running Docker engine (%v); try `make up STAND=native`", err)
	}
	if err := d.s.EnsureTLS(); err != nil { // mounted into the nodes for the secured listeners
		return err
	}
	// Mounted into the nodes too: a node whose agent jar is missing does not start.
	if _, err := d.s.FetchMetricsAgent(ctx); err != nil {
		return err
	}
	if err := d.instanceCompose(); err != nil {
		return fmt.Errorf("writing the compose file of stand instance %d: %w", d.s.instance, err)
	}
	img := d.image()
	d.s.say("stand: docker image %s", img)
	if err := os.WriteFile(d.s.state("docker-image"), []byte(img+"\n"), 0o644); err != nil {
		return err
	}
	// Not --wait: Docker's health status lags (a node just resumed from a
	// pause stays "unhealthy" until its next check), and compose gives up on
	// "unhealthy" at once. Up waits for what matters itself: a Raft leader
	// and all three brokers registered (WaitReady).
	return d.run(ctx, "up", "-d")
}

// stop takes the optional ui profile and the services' profiles down too: a
// UI or a service container started with its profile would otherwise keep
// running, and keep the network.
func (d *docker) stop(ctx context.Context) error { return d.run(ctx, d.allProfiles("down")...) }

func (d *docker) allProfiles(args ...string) []string {
	return append(append([]string{"--profile", "ui", "--profile", node4Profile}, serviceProfiles()...), args...)
}

// node4Profile is the compose profile of lecture 15's fourth node: compose
// sees kafka-4 only with it, and `up -d` without it leaves kafka-4 alone.
const node4Profile = "node4"

// verb is a compose command on node n's service: with node 4's profile, so
// that compose knows the service.
func verb(n int, args ...string) []string {
	if n == Fourth {
		return append([]string{"--profile", node4Profile}, args...)
	}
	return args
}

func (d *docker) stopNode(ctx context.Context, n int, kill bool) error {
	if kill {
		return d.run(ctx, verb(n, "kill", service(n))...)
	}
	return d.run(ctx, verb(n, "stop", service(n))...)
}

// startNode starts node n's container; node 4's is created the first time
// (up), the others exist since make up.
func (d *docker) startNode(ctx context.Context, n int) error {
	if n == Fourth {
		return d.run(ctx, verb(n, "up", "-d", service(n))...)
	}
	return d.run(ctx, "start", service(n))
}

func (d *docker) pauseNode(ctx context.Context, n int) error {
	return d.run(ctx, verb(n, "pause", service(n))...)
}

func (d *docker) resumeNode(ctx context.Context, n int) error {
	return d.run(ctx, verb(n, "unpause", service(n))...)
}

func (d *docker) paused(n int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := d.compose(ctx, verb(n, "ps", "--status", "paused", "--services")...).Output()
	return err == nil && slices.Contains(strings.Fields(string(out)), service(n))
}

func (d *docker) running(n int) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A paused container is still running: its process is there, frozen.
	out, err := d.compose(ctx, verb(n, "ps", "--status", "running", "--status", "paused", "--services")...).Output()
	if err != nil {
		return false, ""
	}
	for _, s := range strings.Fields(string(out)) {
		if s == service(n) {
			return true, "container " + nodeContainer(n)
		}
	}
	return false, ""
}

func (d *docker) logs(n int, w io.Writer) error {
	cmd := d.compose(context.Background(), verb(n, "logs", "--tail", "200", service(n))...)
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}

func (d *docker) reset(ctx context.Context) error { return d.run(ctx, d.allProfiles("down", "-v")...) }

// tool runs the script from Kafka's distribution inside node's container
// (node 0: the first one running), with -i so that a pipe into it (the console
// producer) reaches the tool. Tools that talk to the cluster get every
// running broker, so one that is down neither stalls them nor is needed.
func (d *docker) tool(ctx context.Context, node int, name string, args []string) (*exec.Cmd, error) {
	if node == 0 {
		for _, n := range Nodes {
			if up, _ := d.running(n); up {
				node = n
				break
			}
		}
		if node == 0 {
			return nil, fmt.Errorf("no container of the docker stand is running")
		}
	} else if up, _ := d.running(node); !up {
		return nil, fmt.Errorf("node %d of the docker stand is not running: its tools and data are in its container (make start-node N=%d)", node, node)
	}
	var up []int
	for _, n := range Nodes {
		if ok, _ := d.running(n); ok {
			up = append(up, n)
		}
	}
	return exec.CommandContext(ctx, "docker", dockerToolArgs(node, up, name, args)...), nil
}

// dockerToolArgs runs tool name in node's container. Its bootstrap servers
// are the running nodes only: a stopped container's address does not refuse
// a connection, as a stopped JVM's port on the native stand does, it drops
// it, and a tool that tries it first waits out its connection timeouts.
// KAFKA_OPTS is emptied: the container's own loads the metrics agent, which
// would try to bind the node's metrics port and stop the tool's JVM.
func dockerToolArgs(node int, up []int, name string, args []string) []string {
	all := []string{"exec", "-i", "-e", "KAFKA_OPTS=", nodeContainer(node), "/opt/kafka/bin/" + name + ".sh"}
	if tools[name].bootstrap {
		var servers []string
		for _, n := range up {
			servers = append(servers, service(n)+":9092")
		}
		all = append(all, "--bootstrap-server", strings.Join(servers, ","))
	}
	return append(all, args...)
}

// dataDir is the same path in every container; tool(node) runs in node's.
func (d *docker) dataDir(int) string { return "/var/lib/kafka/data" }

// dockerAnswers reports whether a Docker engine answers (not only a client)
// and the Compose v2 plugin is there (`docker compose`; Compose v1 rejects
// the stand's file). A variable, so tests can stand in for Docker.
var dockerAnswers = func(ctx context.Context) error {
	if err := engineAnswers(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, "docker", "compose", "version").Run(); err != nil {
		return fmt.Errorf("a Docker engine answers but the Compose v2 plugin (`docker compose`) is missing")
	}
	return nil
}

func engineAnswers(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("docker is not installed")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}")
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || len(bytes.TrimSpace(out)) == 0 {
		return fmt.Errorf("no Docker engine answers")
	}
	return nil
}
