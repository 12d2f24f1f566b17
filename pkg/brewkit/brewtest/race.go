//go:build race

package brewtest

// RaceBuild says that this binary runs under the race detector (make
// check's race step): a test whose claim is a speed or a rate measures the
// detector there, not Kafka, and checks that claim only where it is false.
const RaceBuild = true
