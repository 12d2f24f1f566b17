// Command analytics is Brew's analytics service as a stream processor:
// revenue per shop per minute, with its state in a local store and a
// changelog topic, exactly once by default (see package analytics).
package main

import (
	"os"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
)

func main() { analytics.Main("analytics", os.Args[1:]) }
