package main

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A consumer that cannot fetch ends the promo with the reason, in one line.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 30*time.Second, brewtest.BuildCmd(t), "-duration", "3s", "-partitions", "1")
}
