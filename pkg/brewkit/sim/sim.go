// Package sim is the simulated course cluster behind the embedded stand and the
// fast test tier: franz-go's kfake with three nodes 1, 2 and 3, the course's
// cluster id, and a few hooks that make it answer like the real stand where it
// honestly can:
//
//   - DescribeQuorum is answered (and advertised in ApiVersions) from the
//     simulation's own state: voters 1, 2, 3; node 3 is the Raft leader while a
//     majority of voters is up, and there is no leader without a majority.
//   - StopNode closes a node's listener and its open connections, so clients see
//     it go away; partition leaders move to the live nodes.
//   - acks=all produce requests fail with NOT_ENOUGH_REPLICAS while fewer nodes
//     are up than min.insync.replicas (2, or the topic's own).
//   - a topic's max.message.bytes is enforced (MESSAGE_TOO_LARGE).
//   - PauseNode stalls a node's requests until ResumeNode.
//
// What it cannot simulate (real Raft elections, replica fetching, ISR lag,
// offline replicas, retention and compaction timing) is listed in stand/README.md.
package sim

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Controller is the node kfake makes its controller. kfake cannot move its
// controller, so this node cannot be stopped in the simulation.
const Controller = brewkit.SimulatedController

// MinInsyncReplicas is the stand's broker-wide min.insync.replicas.
const MinInsyncReplicas = 2

// Voters are the simulated Raft voters.
var Voters = []int32{1, 2, 3}

// Options configure a simulated cluster.
type Options struct {
	// Ports for nodes 1, 2 and 3; zero picks a free port.
	Ports [3]int
	// DataDir persists topics, records and groups across restarts when set.
	DataDir string
	// Login, when set, makes every node require this SASL login.
	Login *Login
	// Denied, with Login, is a second login that ACLs allow nothing: every
	// request of a client logged in as Denied fails with an authorization
	// error, the way a real cluster answers a user without ACLs.
	// DescribeQuorum, which the simulation answers itself, is then refused
	// to every client.
	Denied *Login
	// TLS, when set, makes every node speak TLS with this configuration.
	TLS *tls.Config
}

// Cluster is a running simulated cluster.
type Cluster struct {
	kf     *kfake.Cluster
	opts   Options
	ports  map[int32]int
	closed chan struct{} // closed by Close: requests left hanging give up

	mu          sync.Mutex
	up          map[int32]bool
	leaderEpoch int32
	hw          int64 // simulated metadata log end: one record per membership change
	lastSeen    map[int32]time.Time
	apiKeys     []kmsg.ApiVersionsResponseApiKey
	paused      map[int32]*pause
	maxMessage  map[string]int // topics' max.message.bytes, which kfake does not enforce
	minISR      map[string]int // topics' own min.insync.replicas
	topicNames  map[[16]byte]string
	lookup      *kgo.Client // asks the cluster for topic ids, outside the control functions
}

// pause is one simulated pause of a node: its requests wait for resumed.
type pause struct {
	since   time.Time
	resumed chan struct{}
}

// ReplicaLagMax is the stands' replica.lag.time.max.ms: a follower silent this
// long leaves the ISR.
const ReplicaLagMax = 10 * time.Second

// New starts a simulated cluster.
func New(opts Options) (*Cluster, error) {
	kopts := []kfake.Opt{
		// kfake numbers nodes from 0 and makes the last one its controller:
		// start nodes 0..3 with node 0 on a throwaway port, then remove it.
		kfake.Ports(0, opts.Ports[0], opts.Ports[1], opts.Ports[2]),
		kfake.ClusterID(brewkit.ClusterID),
		kfake.ListenFn(func(network, addr string) (net.Listener, error) { return listen(network, addr, opts.TLS == nil) }),
		kfake.BrokerConfigs(map[string]string{
			brewkit.SimulatedConfig:      brewkit.SimulatedValue,
			"default.replication.factor": "3",
			"min.insync.replicas":        strconv.Itoa(MinInsyncReplicas),
			// Retention and compaction run every second, like the stands' cleaner.
			"log.cleaner.backoff.ms": "1000",
			// KIP-848 groups notice a silent member after 6 s, as on the stands.
			"group.consumer.session.timeout.ms":    "6000",
			"group.consumer.heartbeat.interval.ms": "1000",
			// Lecture 08 sets its share groups' acquisition lock to 15 s
			// (share.record.lock.duration.ms, a group config kfake does not
			// read): the same as the broker default here, checked every
			// half second.
			"group.share.record.lock.duration.ms": "15000",
			"share.record.lock.sweep.interval.ms": "500",
		}),
	}
	if opts.DataDir != "" {
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
	}
	if l := opts.Login; l != nil {
		kopts = append(kopts, kfake.EnableSASL(), kfake.Superuser(l.mechanism(), l.User, l.Pass))
		if d := opts.Denied; d != nil {
			kopts = append(kopts, kfake.EnableACLs(), kfake.User(d.mechanism(), d.User, d.Pass))
		}
	}
	if opts.TLS != nil {
		kopts = append(kopts, kfake.TLS(opts.TLS))
	}
	kf, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated cluster: %w", err)
	}
	addrs := kf.ListenAddrs() // node order 0, 1, 2, 3
	if err := kf.RemoveNode(0); err != nil {
		kf.Close()
		return nil, fmt.Errorf("removing kfake's node 0: %w", err)
	}
	c := &Cluster{
		kf:          kf,
		opts:        opts,
		closed:      make(chan struct{}),
		ports:       map[int32]int{},
		up:          map[int32]bool{1: true, 2: true, 3: true},
		leaderEpoch: 1,
		hw:          1,
		lastSeen:    map[int32]time.Time{},
		paused:      map[int32]*pause{},
		maxMessage:  map[string]int{},
		minISR:      map[string]int{},
		topicNames:  map[[16]byte]string{},
	}
	for i, n := range Voters {
		_, p, _ := net.SplitHostPort(addrs[i+1])
		c.ports[n], _ = strconv.Atoi(p)
	}
	if err := c.captureApiVersions(); err != nil {
		kf.Close()
		return nil, err
	}
	c.kf.ControlKey(int16(kmsg.ApiVersions), c.apiVersions)
	c.kf.ControlKey(int16(kmsg.DescribeQuorum), c.describeQuorum)
	c.kf.ControlKey(int16(kmsg.Produce), c.produce)
	c.kf.ControlKey(int16(kmsg.CreateTopics), c.noteTopicConfigs)
	c.kf.ControlKey(int16(kmsg.IncrementalAlterConfigs), c.noteAlteredConfigs)
	c.kf.Control(c.stall)
	return c, nil
}

// Close stops the cluster, saving its data when it has a DataDir.
func (c *Cluster) Close() {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	if c.lookup != nil {
		c.lookup.Close()
	}
	c.kf.Close()
}

// Addrs returns host:port of nodes 1, 2 and 3, stopped ones included.
func (c *Cluster) Addrs() []string {
	out := make([]string, 0, len(Voters))
	for _, n := range Voters {
		out = append(out, net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports[n])))
	}
	return out
}

// Config is a brewkit.Config that reaches this cluster, with its login.
// With TLS it is the configuration of a client that trusts no certificate
// the test did not give it, so it fails the handshake: the simulation's
// TLS is there to check what programs say about TLS problems.
func (c *Cluster) Config() brewkit.Config {
	cfg := brewkit.Config{Brokers: c.Addrs(), TLS: c.opts.TLS != nil}
	if l := c.opts.Login; l != nil {
		cfg.SASL, cfg.User, cfg.Pass = l.mechanism(), l.User, l.Pass
	}
	return cfg
}

// Up reports which nodes are running.
func (c *Cluster) Up() map[int32]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int32]bool, len(c.up))
	for n, v := range c.up {
		out[n] = v
	}
	return out
}

// leaderLocked returns the simulated quorum leader, or -1 without a majority.
func (c *Cluster) leaderLocked() int32 {
	live := 0
	for _, n := range Voters {
		if c.up[n] {
			live++
		}
	}
	if live*2 <= len(Voters) || !c.up[Controller] {
		return -1
	}
	return Controller
}

// StopNode stops node n: its listener and connections close and the partitions
// it led get leaders on the live nodes.
func (c *Cluster) StopNode(n int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !slices.Contains(Voters, n):
		return fmt.Errorf("node %d does not exist: the nodes are 1, 2 and 3", n)
	case n == Controller:
		return fmt.Errorf("node %d is the embedded stand's fixed controller and cannot be stopped in the simulation; stop node 1 or 2 (any node can be stopped on the native or docker stand)", n)
	case !c.up[n]:
		return fmt.Errorf("node %d is already stopped", n)
	}
	if p := c.paused[n]; p != nil { // a stop ends a pause
		close(p.resumed)
		delete(c.paused, n)
	}
	if err := c.kf.RemoveNode(n); err != nil {
		return fmt.Errorf("stopping node %d: %w", n, err)
	}
	c.up[n] = false
	c.lastSeen[n] = time.Now()
	c.hw++
	return nil
}

// StartNode starts a stopped node n again on its port.
func (c *Cluster) StartNode(n int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !slices.Contains(Voters, n):
		return fmt.Errorf("node %d does not exist: the nodes are 1, 2 and 3", n)
	case c.up[n]:
		return fmt.Errorf("node %d is already running", n)
	}
	if _, _, err := c.kf.AddNode(n, c.ports[n]); err != nil {
		return fmt.Errorf("starting node %d on port %d: %w", n, c.ports[n], err)
	}
	c.up[n] = true
	c.hw++
	return nil
}

// captureApiVersions asks kfake once which requests it serves, so the ApiVersions
// hook can answer the same list plus DescribeQuorum.
func (c *Cluster) captureApiVersions() error {
	cl, err := kgo.NewClient(c.clientOpts(c.Addrs()[0])...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("reading kfake's api versions: %w", err)
	}
	keys := slices.DeleteFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == int16(kmsg.DescribeQuorum)
	})
	dq := kmsg.NewApiVersionsResponseApiKey()
	dq.ApiKey, dq.MinVersion, dq.MaxVersion = int16(kmsg.DescribeQuorum), 0, 2
	c.apiKeys = append(keys, dq)
	return nil
}

func (c *Cluster) apiVersions(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	c.stallIfPaused()
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = slices.Clone(c.apiKeys)
	return resp, nil, true
}

func (c *Cluster) describeQuorum(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	c.stallIfPaused()
	req := kreq.(*kmsg.DescribeQuorumRequest)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if c.opts.Denied != nil {
		// A control function cannot tell who asks: with a user ACLs allow
		// nothing, the quorum is refused to all, as Kafka refuses it
		// without DESCRIBE on the cluster.
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, rt := range req.Topics {
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDescribeQuorumResponseTopicPartition()
			p.Partition = rp.Partition
			if rt.Topic != "__cluster_metadata" || rp.Partition != 0 {
				p.ErrorCode = kerr.UnknownTopicOrPartition.Code
				t.Partitions = append(t.Partitions, p)
				continue
			}
			p.LeaderID = c.leaderLocked()
			p.LeaderEpoch = c.leaderEpoch
			p.HighWatermark = c.hw
			for _, n := range Voters {
				v := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
				v.ReplicaID = n
				seen := now
				if !c.up[n] {
					seen = c.lastSeen[n]
				}
				v.LogEndOffset = c.hw
				v.LastFetchTimestamp = seen.UnixMilli()
				v.LastCaughtUpTimestamp = seen.UnixMilli()
				p.CurrentVoters = append(p.CurrentVoters, v)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	for _, n := range Voters {
		nd := kmsg.NewDescribeQuorumResponseNode()
		nd.NodeID = n
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(c.ports[n])
		nd.Listeners = append(nd.Listeners, l)
		resp.Nodes = append(resp.Nodes, nd)
	}
	return resp, nil, true
}

// produce fails acks=all writes with NOT_ENOUGH_REPLICAS while fewer nodes are
// up than min.insync.replicas, as real Kafka does once the ISR shrinks below it.
func (c *Cluster) produce(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	c.stallIfPaused()
	req := kreq.(*kmsg.ProduceRequest)
	c.resolveTopicIDs(req)
	c.refuseTooLarge(req)
	if req.Acks != -1 {
		return nil, nil, false
	}
	leader := c.kf.CurrentNode()
	c.mu.Lock()
	required := MinInsyncReplicas // the broker-wide value, or a topic's own
	for _, t := range req.Topics {
		required = max(required, c.minISR[c.nameLocked(t.Topic, t.TopicID)])
	}
	inSync := 0
	var lagging *pause // a paused follower still in the ISR
	for n, up := range c.up {
		p := c.paused[n]
		switch {
		case !up:
		case p != nil && time.Since(p.since) >= ReplicaLagMax:
			// Out of the ISR: it has not fetched for replica.lag.time.max.ms.
		default:
			inSync++
			if p != nil && n != leader && (lagging == nil || p.since.Before(lagging.since)) {
				lagging = p
			}
		}
	}
	c.mu.Unlock()
	if lagging != nil && inSync >= required {
		// The leader writes, then waits for the paused follower; the request
		// times out first unless the follower leaves the ISR (or resumes).
		timedOut := false
		c.kf.SleepControl(func() {
			timeout := time.NewTimer(time.Duration(req.TimeoutMillis) * time.Millisecond)
			defer timeout.Stop()
			select {
			case <-timeout.C:
				timedOut = true
			case <-time.After(time.Until(lagging.since.Add(ReplicaLagMax))):
			case <-lagging.resumed:
			}
		})
		if timedOut {
			c.kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.RequestTimedOut,
				When: func(r kmsg.Request) bool { return r == kreq }})
		}
		return nil, nil, false
	}
	if inSync >= required {
		return nil, nil, false
	}
	return refusal(req, kerr.NotEnoughReplicas), nil, true
}

// listen wraps kfake's listeners so that closing one (when a node stops)
// also closes the connections it accepted, the way a stopped process drops them.
// plain says the cluster speaks no TLS, so that the first bytes of a
// connection are the size of its first request.
func listen(network, addr string, plain bool) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	return &trackingListener{Listener: ln, conns: map[*trackedConn]struct{}{}, plain: plain}, nil
}

type trackingListener struct {
	net.Listener
	plain  bool
	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

// maxRequest is Kafka's socket.request.max.bytes: a broker drops a
// connection whose request says it is larger, before reading it. kfake would
// allocate it: a TLS handshake sent to a plain listener reads as 352 MB.
const maxRequest = 100 << 20

// Read refuses, on a plain listener, a first request over maxRequest.
func (c *trackedConn) Read(p []byte) (int, error) {
	if c.l.plain && !c.checked {
		c.checked = true
		if _, err := io.ReadFull(c.Conn, c.first[:]); err != nil {
			return 0, err
		}
		if size := binary.BigEndian.Uint32(c.first[:]); size > maxRequest {
			c.Close()
			return 0, fmt.Errorf("a request of %d bytes, over socket.request.max.bytes (%d): not Kafka", size, maxRequest)
		}
		c.pending = c.first[:]
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (l *trackingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	tc := &trackedConn{Conn: conn, l: l}
	l.conns[tc] = struct{}{}
	return tc, nil
}

// trackedConn forgets itself when closed, so a long-running stand does not
// accumulate connections that clients already closed.
type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once

	checked bool    // the first request's size was read (one reader: kfake's)
	first   [4]byte // its size
	pending []byte  // what of first Read has yet to return
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func (l *trackingListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		for conn := range l.conns {
			conn.Conn.Close() // the conn's own Close would take l.mu again
		}
		clear(l.conns)
	}
	return err
}

// NodeControl adapts the cluster to brewkit.NodeControl. The simulation has
// no signals: kill and a graceful stop are the same.
func (c *Cluster) NodeControl() brewkit.NodeControl { return simNodes{c} }

type simNodes struct{ c *Cluster }

func (s simNodes) StopNode(_ context.Context, n int, _ bool) error { return s.c.StopNode(int32(n)) }
func (s simNodes) StartNode(_ context.Context, n int) error        { return s.c.StartNode(int32(n)) }
func (s simNodes) PauseNode(_ context.Context, n int) error        { return s.c.PauseNode(int32(n)) }
func (s simNodes) ResumeNode(_ context.Context, n int) error       { return s.c.ResumeNode(int32(n)) }

// PauseNode freezes node n: requests it receives wait, unanswered, until
// ResumeNode, the way a SIGSTOPped broker holds its connections. acks=all
// writes to partitions it follows wait for it until their request times out
// (the write itself is done, as on real Kafka) or until it has been paused
// ReplicaLagMax and leaves the ISR. The metadata still lists it in the ISR:
// the simulation does not rewrite ISR lists for a paused node.
func (c *Cluster) PauseNode(n int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !slices.Contains(Voters, n):
		return fmt.Errorf("node %d does not exist: the nodes are 1, 2 and 3", n)
	case !c.up[n]:
		return fmt.Errorf("node %d is not running", n)
	case c.paused[n] != nil:
		return fmt.Errorf("node %d is already paused", n)
	}
	c.paused[n] = &pause{since: time.Now(), resumed: make(chan struct{})}
	return nil
}

// ResumeNode lets a paused node answer again, the waiting requests first.
func (c *Cluster) ResumeNode(n int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.paused[n]
	if p == nil {
		return fmt.Errorf("node %d is not paused", n)
	}
	close(p.resumed)
	delete(c.paused, n)
	return nil
}

// Paused reports which nodes are paused.
func (c *Cluster) Paused() map[int32]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int32]bool{}
	for n := range c.paused {
		out[n] = true
	}
	return out
}

// stall runs on every request: one to a paused node waits for its resume.
func (c *Cluster) stall(kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	c.stallIfPaused()
	return nil, nil, false
}

func (c *Cluster) stallIfPaused() {
	n := c.kf.CurrentNode()
	c.mu.Lock()
	p := c.paused[n]
	c.mu.Unlock()
	if p != nil {
		c.kf.SleepControl(func() { <-p.resumed })
	}
}

// LeaderOf returns the node that leads topic's partition.
func (c *Cluster) LeaderOf(topic string, partition int32) int32 {
	return c.kf.LeaderFor(topic, partition)
}

// noteTopicConfigs and noteAlteredConfigs watch topic configs go by (they
// answer nothing) to learn each topic's max.message.bytes.
func (c *Cluster) noteTopicConfigs(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	for _, t := range kreq.(*kmsg.CreateTopicsRequest).Topics {
		for _, cf := range t.Configs {
			c.noteMaxMessage(t.Topic, cf.Name, cf.Value)
		}
	}
	return nil, nil, false
}

func (c *Cluster) noteAlteredConfigs(kreq kmsg.Request) (kmsg.Response, error, bool) {
	c.kf.KeepControl()
	for _, r := range kreq.(*kmsg.IncrementalAlterConfigsRequest).Resources {
		if r.ResourceType == kmsg.ConfigResourceTypeTopic {
			for _, cf := range r.Configs {
				c.noteMaxMessage(r.ResourceName, cf.Name, cf.Value)
			}
		}
	}
	return nil, nil, false
}

func (c *Cluster) noteMaxMessage(topic, name string, value *string) {
	if value == nil {
		return
	}
	n, err := strconv.Atoi(*value)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch name {
	case "max.message.bytes":
		c.maxMessage[topic] = n
	case "min.insync.replicas":
		c.minISR[topic] = n
	}
}

// refuseTooLarge fails, with MESSAGE_TOO_LARGE, each partition of a produce
// request whose batch is bigger than its topic's max.message.bytes, as a
// broker does; the other partitions are written.
func (c *Cluster) refuseTooLarge(req *kmsg.ProduceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range req.Topics {
		limit, ok := c.maxMessage[c.nameLocked(t.Topic, t.TopicID)]
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			if len(p.Records) > limit {
				c.kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: t.Topic, Partitions: []int32{p.Partition},
					Err: kerr.MessageTooLarge, When: func(r kmsg.Request) bool { return r == kmsg.Request(req) }})
			}
		}
	}
}

// nameLocked returns a produce request topic's name: newer requests carry only
// the topic id.
func (c *Cluster) nameLocked(name string, id [16]byte) string {
	if name != "" {
		return name
	}
	return c.topicNames[id]
}

// resolveTopicIDs learns the names of the request's topic ids, when some
// topic has configs the simulation enforces and an id is not known yet. It
// asks the cluster from outside the control function (SleepControl lets the
// cluster answer meanwhile).
func (c *Cluster) resolveTopicIDs(req *kmsg.ProduceRequest) {
	c.mu.Lock()
	unknown := false
	for _, t := range req.Topics {
		if t.Topic == "" && c.topicNames[t.TopicID] == "" {
			unknown = true
		}
	}
	var names []string
	for n := range c.maxMessage {
		names = append(names, n)
	}
	for n := range c.minISR {
		names = append(names, n)
	}
	c.mu.Unlock()
	if !unknown || len(names) == 0 {
		return
	}
	c.kf.SleepControl(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if c.lookup == nil {
			cl, err := kgo.NewClient(c.clientOpts(c.Addrs()...)...)
			if err != nil {
				return
			}
			c.lookup = cl
		}
		mreq := kmsg.NewPtrMetadataRequest()
		for _, n := range names {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			mreq.Topics = append(mreq.Topics, rt)
		}
		resp, err := mreq.RequestWith(ctx, c.lookup)
		if err != nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, t := range resp.Topics {
			if t.Topic != nil && t.ErrorCode == 0 {
				c.topicNames[t.TopicID] = *t.Topic
			}
		}
	})
}
