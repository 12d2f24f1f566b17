// Package labtest holds what the lab's tests share: how they take the
// machine before starting a lab cluster beside the stand.
package labtest

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Stand readies a test that runs a lab cluster: it needs real Kafka's jars
// and Java, holds the stand alone (the lab's JVMs load the machine as a
// second cluster would), and runs beside the native stand only (the lab
// runs the same beside any stand, so the docker tier skips it). It returns
// the stand, whose jars and Java the lab runs.
func Stand(t *testing.T) *stand.Stand {
	t.Helper()
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	env.Exclusive(t)
	s := env.Stand(t)
	if s.Current() == stand.Docker {
		t.Skip("the lab cluster runs the same beside any stand; the real tier checks it beside the native one")
	}
	return s
}
