package stand

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// No two instances' ports overlap, none is a contract port, and every one
// lies below Linux's ephemeral range, where the kernel never hands it out.
func TestInstancePortBlocksDoNotOverlap(t *testing.T) {
	owner := map[int]string{}
	for c := range contractOffset {
		owner[c] = "the contract"
	}
	for n := 1; n <= MaxInstance; n++ {
		for c := range contractOffset {
			p := InstancePort(n, c)
			if p >= 32768 {
				t.Errorf("instance %d maps %d to %d, inside the ephemeral range", n, c, p)
			}
			who := "instance " + strconv.Itoa(n) + " (for " + strconv.Itoa(c) + ")"
			if prev, ok := owner[p]; ok {
				t.Errorf("port %d is both %s's and %s's", p, prev, who)
			}
			owner[p] = who
		}
	}
	if got := InstancePort(0, 19092); got != 19092 {
		t.Errorf("instance 0 moved 19092 to %d", got)
	}
	if got, want := Bootstrap(1), "127.0.0.1:22112,127.0.0.1:22113,127.0.0.1:22114"; got != want {
		t.Errorf("Bootstrap(1) = %s, want %s", got, want)
	}
}

// A node's properties on an instance name no contract port and no path of
// instance 0, and output on an instance reads back as the contract's.
func TestInstanceConfigMovesEveryPortAndPath(t *testing.T) {
	root := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "..", "..", "stand", "native"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "stand"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(root, "stand", "native")); err != nil {
		t.Fatal(err)
	}
	d := &native{s: &Stand{Root: root, instance: 3}}
	port := regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
	for _, n := range []int{1, 2, 3, Fourth} {
		if err := d.instanceConfig(n); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(d.config(n))
		if err != nil {
			t.Fatal(err)
		}
		conf := string(b)
		for _, m := range port.FindAllStringSubmatch(conf, -1) {
			p, _ := strconv.Atoi(m[1])
			if p < 22300 || p >= 22400 {
				t.Errorf("node %d on instance 3 names %s, outside the instance's block 22300-22399", n, m[0])
			}
		}
		if strings.Contains(conf, ".stand/native/") || strings.Contains(conf, ".stand/tls/") {
			t.Errorf("node %d on instance 3 names instance 0's state:\n%s", n, conf)
		}
		if !strings.Contains(conf, "log.dirs=.stand/i3/native/node") {
			t.Errorf("node %d on instance 3 keeps its data elsewhere than .stand/i3/native", n)
		}
		orig, _ := os.ReadFile(d.contractConfig(n))
		if back := ContractPorts(3, conf); !strings.Contains(back, "127.0.0.1:"+strconv.Itoa(contractClientPort(n))) || strings.Count(back, "127.0.0.1:") != strings.Count(string(orig), "127.0.0.1:") {
			t.Errorf("node %d: the instance's ports do not read back as the contract's", n)
		}
	}
	if got := ContractPorts(3, "leader 127.0.0.1:22312, offset 122312, port 22399"); got != "leader 127.0.0.1:19092, offset 122312, port 22399" {
		t.Errorf("ContractPorts rewrote more or less than whole instance ports: %q", got)
	}
}

// Node control refuses a KAFKA_BOOTSTRAP of another instance.
func TestNodeControlRefusesAnotherInstancesCluster(t *testing.T) {
	s := &Stand{Root: t.TempDir(), instance: 2}
	if err := s.setCurrent(Native); err != nil { // instance 2's native stand is up
		t.Fatal(err)
	}
	t.Setenv("KAFKA_BOOTSTRAP", Bootstrap(1))
	if _, _, err := s.node(1); err == nil || !strings.Contains(err.Error(), "refuses") {
		t.Fatalf("node control of instance 2 with instance 1's bootstrap: %v, want a refusal", err)
	}
	t.Setenv("KAFKA_BOOTSTRAP", Bootstrap(2))
	if err := s.belongs(); err != nil {
		t.Fatalf("instance 2's own bootstrap: %v", err)
	}
	s0 := &Stand{Root: t.TempDir()}
	if err := s0.belongs(); err == nil {
		t.Fatal("instance 0 accepted instance 2's bootstrap")
	}
	// With no stand up, node control says so first, whatever KAFKA_BOOTSTRAP is.
	if _, _, err := s0.node(1); err == nil || !strings.Contains(err.Error(), "make up") {
		t.Fatalf("node control with no stand up: %v, want the advice to run make up", err)
	}
}

// The compose file of an instance publishes only the instance's ports, and
// names containers, a network and key stores of its own.
func TestInstanceComposeMovesPortsContainersAndNetwork(t *testing.T) {
	root := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "..", "..", "stand"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(root, "stand")); err != nil {
		t.Fatal(err)
	}
	d := &docker{s: &Stand{Root: root, instance: 2}}
	if err := d.instanceCompose(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".stand", "i2", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, m := range regexp.MustCompile(`127\.0\.0\.1:(\d+)`).FindAllStringSubmatch(conf, -1) {
		if p, _ := strconv.Atoi(m[1]); (p < 22200 || p >= 22300) && p != 8080 {
			t.Errorf("instance 2's compose file names %s, outside its block 22200-22299", m[0])
		}
	}
	for _, want := range []string{"container_name: brew-i2-kafka-1", "10.210.121.11", "../.stand/i2/tls:/etc/brew/tls"} {
		if !strings.Contains(conf, want) {
			t.Errorf("instance 2's compose file has no %q", want)
		}
	}
	for _, gone := range []string{"container_name: kafka-", "10.210.119.", "../.stand/tls:"} {
		if strings.Contains(conf, gone) {
			t.Errorf("instance 2's compose file still has %q", gone)
		}
	}
}
