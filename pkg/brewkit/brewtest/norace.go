//go:build !race

package brewtest

// RaceBuild says that this binary runs under the race detector (race.go).
const RaceBuild = false
