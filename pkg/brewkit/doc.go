// Package brewkit holds what every lecture of the Brew Kafka course repeats: the
// cluster settings from the environment, kgo clients and a kadm admin built from
// them, a dial check that fails fast with a useful message, stand detection, and
// table and live-view printing.
//
// Sub-packages:
//   - stand: starts, stops and inspects the course cluster on any of its three stands;
//   - sim: the simulated cluster on franz-go's kfake behind the embedded stand;
//   - brewtest: test helpers (a cluster per test, RequireReal, waiting for conditions).
package brewkit
