package lecture_test

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's output blocks are well formed and agree with README.en.md,
// and the programs do not link the simulation.
func TestLecture(t *testing.T) { brewtest.CheckLecture(t) }

// A flag with a bad value is named with its value, exit status 2.
func TestBadFlagsNameTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"cmd/users", "-iterations", "1000"},
		{"cmd/users", "-partner", ""},
		{"cmd/users", "-analytics", "partner"},
		{"cmd/quotas", "-rate", "10"},
		{"cmd/quotas", "-with", "0s"},
		{"cmd/quotas", "-quiet", "noisy"},
		{"cmd/tlsprobe", "-timeout", "0s"},
		{"cmd/tlsprobe", "-cn", "partner/../brew"},
		{"cmd/tlsprobe", "-wrong-host", "localhost"},
		{"cmd/tlsprobe", "-topic", "bad topic"},
		{"cmd/acls", "-timeout", "0s"},
		{"cmd/acls", "-timeout", "5m0s"},
		{"cmd/acls", "describe", "-principal", "partner"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}
