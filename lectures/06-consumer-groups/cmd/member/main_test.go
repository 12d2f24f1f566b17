package main

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A member whose fetches are refused (its read permission revoked) says so
// in one line and ends, instead of hanging in LeaveGroup.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t), "-name", "a", "-group", "brew.test.fetch-fault", "-topic", "brew.orders.v1")
}
