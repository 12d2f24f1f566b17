// Package brewkit holds what every lecture of the Brew Kafka course repeats:
//
//   - the cluster settings from the environment (Config, FromEnv), kgo clients
//     and a kadm admin built from them (NewClient, Connect), and a connection
//     check that fails fast with one line saying what is wrong (Ping: nothing
//     listens, a login wanted or refused, a TLS mismatch, a broker that answers
//     nothing); every wait for a broker bounded by KAFKA_TIMEOUT (Config.Bound);
//   - how a program behaves: its flags checked (FlagCheck), its body run with
//     one-line errors, exit statuses and Ctrl-C (Main), a child program pointed
//     at the cluster (Command), a crash on purpose (Crash);
//   - the Brew domain: its topics (Catalog, EnsureTopics) and its events
//     (Event, NewOrder, DecodeEvent) in one versioned JSON encoding, keyed by
//     order id; and a topic of its own for one run of a demo (FreshTopic);
//   - what the lectures read from the cluster: the Raft quorum
//     (DescribeQuorum), the Kafka release (ClusterRelease), whether it is the
//     simulation (IsSimulated), end offsets and a topic read up to them
//     (EndOffsets, ReadTo), fetch errors a consumer must not wait through
//     and a node that answers no fetch (FetchCheck, FetchCheck.Poll), a group's dynamic configs (SetGroupConfigs, GroupConfigs);
//   - stopping, starting, pausing and resuming nodes (NodeControl), which the
//     stand that is up or the simulation provides;
//   - aligned tables and live views that redraw in place (Table, Live), and
//     waiting for a condition or a while, cut short by ctx (WaitFor, Sleep).
//
// Sub-packages:
//   - stand: starts, stops and inspects the course cluster on any of its three stands;
//   - sim: the simulated cluster on franz-go's kfake behind the embedded stand;
//   - steps: a lecture's walk-through (steps.txt), for make tour and make reset-lecture;
//   - barchart: a results CSV read and drawn as grouped bars (lectures 08 and 09's charts);
//   - brewtest: test helpers (a cluster per test, node control, the README checks).
package brewkit
