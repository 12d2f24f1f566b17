// A plausible wrong solution of exercise 03/retention: it knows segments
// must roll, and sets retention.ms low "to be safe" about the 30 s bound, so
// clicks a couple of seconds old are deleted before the live view has read
// them. The grader must fail it.
package retention

func Configs() map[string]string {
	return map[string]string{
		"retention.ms": "2000",
		"segment.ms":   "1000",
	}
}
