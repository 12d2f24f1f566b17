// A plausible wrong solution of exercise 03/retention: retention.ms alone.
// Retention deletes whole closed segments, and with the default segment.ms
// (7 days) and segment.bytes (1 GiB) the one segment being written never
// closes, so nothing is ever deleted. The grader must fail it.
package retention

func Configs() map[string]string {
	return map[string]string{"retention.ms": "10000"}
}
