package stand

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Status is what `make status` prints.
type Status struct {
	Flavor  Flavor
	Nodes   []NodeStatus
	Leader  int32 // the Raft leader, -1 when there is none
	Voters  []int32
	Quorum  string          // why the leader is unknown, when it is
	Image   string          // docker: the nodes' image
	StandIn string          // docker: the stand-in build, when the image is the course's stand-in
	Release brewkit.Release // what the cluster says of its release; zero when it did not answer

	Services []ServiceStatus // the services beside the cluster that run or have state
}

// NodeStatus is one node of the stand.
type NodeStatus struct {
	ID         int
	Addr       string
	Running    bool
	Paused     bool   // frozen by pause-node
	Process    string // pid or container when running
	Registered bool   // listed as a broker in the cluster's metadata
	Metrics    string // the address its metrics for Prometheus answer on; "" when nothing listens there
}

// Status reports the flavor that is up, each node's process and registration,
// the quorum leader, and the services beside the cluster. With no stand up it
// fails, and the Status it returns holds the services alone.
func (s *Stand) Status(ctx context.Context) (Status, error) {
	f, d, err := s.current()
	if err != nil {
		return Status{Services: s.ServiceStatuses(ctx)}, err
	}
	st := Status{Flavor: f, Leader: -1, Services: s.ServiceStatuses(ctx)}
	if dk, ok := d.(*docker); ok {
		if st.Image, st.StandIn = dk.runningImage(); st.Image == "" {
			st.Image = dk.image()
		}
	}
	var brokers []int32
	cl, err := brewkit.NewClient(cluster())
	if err != nil {
		return st, err
	}
	defer cl.Close()
	// A request sent to a paused node never gets an answer: each is tried up
	// to three times, two seconds each, and the client picks a node anew.
	for range 3 {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		md, err := kadm.NewClient(cl).BrokerMetadata(actx)
		cancel()
		if err == nil {
			brokers = md.Brokers.NodeIDs()
			break
		}
	}
	if f != Embedded {
		for range 3 {
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			r, err := brewkit.ClusterRelease(actx, cl)
			cancel()
			if err == nil {
				st.Release = r
				break
			}
		}
	}
	for range 3 {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		q, err := brewkit.DescribeQuorum(actx, cl)
		cancel()
		if err == nil {
			st.Leader, st.Voters, st.Quorum = q.LeaderID, q.VoterIDs(), ""
			break
		}
		st.Quorum = err.Error()
	}
	nodes := Nodes
	if f != Embedded { // lecture 15's fourth node, while it runs or is still a broker of the cluster
		if up, _ := d.running(Fourth); up || slices.Contains(brokers, int32(Fourth)) {
			nodes = append(slices.Clone(Nodes), Fourth)
		}
	}
	for _, n := range nodes {
		up, detail := d.running(n)
		ns := NodeStatus{
			ID:         n,
			Addr:       fmt.Sprintf("127.0.0.1:%d", ClientPort(n)),
			Running:    up,
			Paused:     up && d.paused(n),
			Process:    detail,
			Registered: slices.Contains(brokers, int32(n)),
		}
		// The real stands' nodes serve metrics; the simulation has none.
		if f != Embedded && up && listening(metricsAddr(n)) {
			ns.Metrics = metricsAddr(n)
		}
		st.Nodes = append(st.Nodes, ns)
	}
	return st, nil
}

// Print writes the status as a table.
func (st Status) Print(w io.Writer) {
	kind := "real Kafka " + KafkaVersion
	if st.Flavor == Embedded {
		kind = "kfake simulation, not real Kafka"
	}
	fmt.Fprintf(w, "stand: %s (%s)\n", st.Flavor, kind)
	if st.Release.Software != "" {
		fmt.Fprintf(w, "cluster: %s\n", st.Release)
		if d := st.Release.Differs(KafkaMinor); d != "" {
			fmt.Fprintf(w, "WARNING: %s\n", d)
		}
	}
	switch {
	case st.StandIn != "":
		fmt.Fprintf(w, "image: %s, a STAND-IN built here by stand/standin/build (build %s), not the official image\n", st.Image, st.StandIn)
	case st.Image != "":
		fmt.Fprintf(w, "image: %s\n", st.Image)
	}
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "NODE", "ADDRESS", "PROCESS", "BROKER", "METRICS")
	for _, n := range st.Nodes {
		proc := "stopped"
		switch {
		case n.Paused:
			proc = "PAUSED (make resume-node N=" + fmt.Sprint(n.ID) + "), " + n.Process
		case n.Running:
			proc = "running, " + n.Process
		}
		reg, metrics := "-", "-"
		if n.Registered {
			reg = "registered"
		}
		if n.Metrics != "" {
			metrics = n.Metrics
		}
		t.Row(n.ID, n.Addr, proc, reg, metrics)
	}
	t.Flush()
	switch {
	case st.Leader >= 0:
		fmt.Fprintf(w, "\nquorum leader (active controller): node %d\n", st.Leader)
	case st.Quorum != "":
		fmt.Fprintf(w, "\nquorum leader: unknown (%s)\n", st.Quorum)
	default:
		fmt.Fprintf(w, "\nquorum leader: none (no majority of voters is up)\n")
	}
	if len(st.Services) > 0 {
		fmt.Fprintln(w)
		PrintServices(w, st.Services)
	}
}
