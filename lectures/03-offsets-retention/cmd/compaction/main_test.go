package main

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Reading the compacted log back: a refused fetch is reported, not waited on.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t))
}
