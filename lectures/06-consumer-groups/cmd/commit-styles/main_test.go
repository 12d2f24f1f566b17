package main

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A member whose fetches are refused (its read permission revoked) says so
// in one line and ends, instead of waiting for the group to settle.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 10*time.Second, brewtest.BuildCmd(t))
}
