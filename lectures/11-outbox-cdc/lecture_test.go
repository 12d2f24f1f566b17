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
		{"cmd/dual-write", "-orders", "0"},
		{"cmd/dual-write", "-kills", "-1"},
		{"cmd/dual-write", "-topic", "bad topic"},
		{"cmd/outbox", "-relays", "0"},
		{"cmd/outbox", "-batch", "0"},
		{"cmd/outbox", "-writer-kills", "200"},
		{"cmd/outbox", "relay", "-poll", "0s"},
		{"cmd/outbox", "relay", "-kills", "sent:3"},
		{"cmd/inbox", "-kills", "-1"},
		{"cmd/inbox", "-schema", "outbox"},
		{"cmd/inbox", "kitchen", "-mode", "twice"},
		{"cmd/cdc", "-orders", "0"},
		{"cmd/cdc", "-slot", "Bad-Slot"},
		{"cmd/cdc", "-ack-every", "0s"},
		{"cmd/cdc", "-down", "0"},
		{"cmd/debezium", "-orders", "0"},
		{"cmd/debezium", "-kill-at", "500"},
		{"cmd/debezium", "-slot", "Bad-Slot"},
		{"cmd/debezium", "-connector", ""},
		{"cmd/compare", "-producers", "relay,kafka"},
		{"cmd/compare", "-backlog", "1"},
		{"cmd/compare", "-name", "Bad-Name"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}
