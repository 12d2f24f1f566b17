// The reference solution of exercise 03/retention.
package retention

// Configs: retention deletes a closed segment once its newest record is
// older than retention.ms, at the next check (every 5 s on the stands), and
// a segment stays open for segment.ms at most while records keep coming. So
// a click is deleted no sooner than 10 s after it was written, and no later
// than segment.ms + retention.ms + the check interval: 2 + 10 + 5 = 17 s,
// well within 30.
func Configs() map[string]string {
	return map[string]string{
		"retention.ms": "10000",
		"segment.ms":   "2000",
	}
}
